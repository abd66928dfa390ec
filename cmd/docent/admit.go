package main

import (
	"github.com/docent-hq/docent/admission"
	"github.com/docent-hq/docent/api"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/config"
	"github.com/docent-hq/docent/console"
)

// serve's one admission control, which every entrance (/api/ask, /mcp,
// the console's playground, Slack, Discord) answers through, and the
// signal the chat cores wait on to answer the questions held during the
// first sync.

// admissionOptions are the admission control's bounds for an answer
// provider. The offline answerer is CPU-bound, so the defaults (a few
// answers per core) keep latency in a queue instead of in the scheduler;
// a model-backed answer spends its seconds waiting on the provider, so
// many more may run at once.
func admissionOptions(provider string) admission.Options {
	if provider == config.ProviderOffline {
		return admission.Options{}
	}
	return admission.Options{Slots: 64}
}

// openAdmission builds serve's admission control, its refusals and state
// in the metrics, and the loaded signal.
func (m *Main) openAdmission() *admission.Controller {
	o := admissionOptions(m.Config.Answerer.Provider)
	o.OnShed = func(platform string, _ admission.Reason) { m.Metrics.ObserveShed(platform, api.CodeOverloaded) }
	c := admission.New(o)
	m.Metrics.WatchAdmission(func() (running, waiting int) {
		s := c.Stats()
		for _, n := range s.Waiting {
			waiting += n
		}
		return s.Running, waiting
	})
	m.admission = c
	m.loaded = make(chan struct{})
	return c
}

// markLoaded tells the chat cores the index can answer: the questions
// they held are answered.
func (m *Main) markLoaded() {
	if m.loaded != nil {
		m.loadedOnce.Do(func() { close(m.loaded) })
	}
}

// shedNotReady counts the API's and MCP's refusals before the index is
// loaded (the admission control counts its own).
func (m *Main) shedNotReady(platform string) func(code string) {
	return func(code string) {
		if code == api.CodeNotReady {
			m.Metrics.ObserveShed(platform, code)
		}
	}
}

// chatDeps are what the chat adapters are built on: answers through the
// Recorder (links signed), state in the store, and what serve shares —
// the loaded signal, the admission control, the delivery metric.
func (m *Main) chatDeps() chatDeps {
	d := chatDeps{asker: m.chatAsker(), store: m.chatStore(), stale: m.staleChecker(), loaded: m.loaded,
		delivered: m.Metrics.ObserveDelivery}
	if m.Store != nil {
		d.resolutions = m.Store
	}
	if m.admission != nil {
		d.admission = m.admission
	}
	return d
}

// botConfig adds to a chat core's configuration what serve shares.
func (d chatDeps) botConfig(platform string, bc bot.Config) bot.Config {
	bc.Loaded, bc.Admission = d.loaded, d.admission
	if d.delivered != nil {
		bc.OnDelivery = func(posted bool) { d.delivered(platform, posted) }
	}
	return bc
}

// consoleAdmission is the admission control for the playground (nil
// outside serve).
func (m *Main) consoleAdmission() console.Admission {
	if m.admission == nil {
		return nil
	}
	return m.admission
}
