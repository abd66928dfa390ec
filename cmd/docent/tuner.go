package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/docent-hq/docent/answer"
	offlineans "github.com/docent-hq/docent/answer/offline"
	"github.com/docent-hq/docent/console"
	"github.com/docent-hq/docent/eval"
)

// Settings under which the console's applied calibration is stored.
const (
	settingDecision = "answerer.decision"
	settingPassage  = "answerer.passage"
)

// tuner tunes the offline answerer from the console: synonyms added from
// misses, calibration on the golden set, a fit put in force. Each change
// is stored, so it holds after a restart (see loadTuning).
type tuner struct {
	m *Main
}

var _ console.Tuner = tuner{}

// AddSynonym adds the entry to the answerer's synonyms and stores it.
func (t tuner) AddSynonym(ctx context.Context, entry, by string) error {
	if err := t.m.Synonyms.Add(entry); err != nil {
		return err
	}
	return t.m.Store.AddSynonym(ctx, entry, by)
}

// Calibrate fits on g through a pipeline of its own (the same index,
// retriever and synonyms, its own gate, every question answered), so
// that live questions are not answered by the calibration's rule.
func (t tuner) Calibrate(ctx context.Context, g *eval.Golden) (eval.Fit, error) {
	m := t.m
	st := offlineans.NewStages(m.Retriever, offlineOptions(m.env(m.Config.DataDir), answererDeps{corpus: m.Corpus, emb: m.Embedder}, m.Synonyms))
	gate, _ := st.Gate.(*offlineans.Gate)
	gate.SetPassage(m.OfflineGate.Passage())
	st.Rule = answer.Always{}
	p, err := answer.New(st, m.Log, answer.Options{})
	if err != nil {
		return eval.Fit{}, err
	}
	return calibrateOn(ctx, p, gate, g, "golden set", corpusName(m.Config), m.Config.Answerer.Passage == nil, m.Pipeline.Rule(), "")
}

// Apply puts the fit in force and stores it.
func (t tuner) Apply(ctx context.Context, f eval.Fit, by string) error {
	if err := f.Rule.Validate(); err != nil {
		return err
	}
	rule, err := json.Marshal(f.Rule)
	if err != nil {
		return err
	}
	if err := t.m.Store.SetSetting(ctx, settingDecision, string(rule), by); err != nil {
		return err
	}
	if f.Passage != nil {
		pm := offlineans.PassageModel{Bias: f.Passage.Bias, Weights: f.Passage.Weights}
		b, err := json.Marshal(pm)
		if err != nil {
			return err
		}
		if err := t.m.Store.SetSetting(ctx, settingPassage, string(b), by); err != nil {
			return err
		}
		t.m.OfflineGate.SetPassage(pm)
	}
	t.m.Pipeline.SetRule(f.Rule)
	t.m.Log.Info("calibration applied", slog.String("by", by), slog.Float64("answer_at", f.Rule.AnswerAt))
	return nil
}

// loadTuning puts what the console stored in force at start: the
// synonyms added from misses, and an applied calibration, unless the
// config sets its own answerer.decision (or answerer.passage).
func (m *Main) loadTuning(ctx context.Context) error {
	if m.OfflineGate == nil {
		return nil
	}
	entries, err := m.Store.ListSynonyms(ctx)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := m.Synonyms.Add(e); err != nil {
			m.Log.Warn("stored synonym skipped", slog.String("entry", e), slog.Any("error", err))
		}
	}
	if v, ok, err := m.Store.Setting(ctx, settingDecision); err != nil {
		return err
	} else if ok && m.Config.Answerer.Decision == nil {
		var rule answer.Logistic
		if err := json.Unmarshal([]byte(v), &rule); err != nil || rule.Validate() != nil {
			return fmt.Errorf("stored %s: %v", settingDecision, err)
		}
		m.Pipeline.SetRule(rule)
	}
	if v, ok, err := m.Store.Setting(ctx, settingPassage); err != nil {
		return err
	} else if ok && m.Config.Answerer.Passage == nil {
		var pm offlineans.PassageModel
		if err := json.Unmarshal([]byte(v), &pm); err != nil {
			return fmt.Errorf("stored %s: %w", settingPassage, err)
		}
		m.OfflineGate.SetPassage(pm)
	}
	return nil
}
