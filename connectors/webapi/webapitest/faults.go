// Package webapitest holds what the fake API servers of the wiki sources
// share: scripted failures (the next requests answer 429, 500, ... with
// chosen headers), failures for one resource, and request counts.
package webapitest

import (
	"maps"
	"net/http"
	"sync"
)

// Faults scripts a fake server's failures and counts its requests. The
// zero value is ready; it is safe for concurrent use.
type Faults struct {
	mu       sync.Mutex
	script   []Answer
	failing  map[string]failure
	total    int
	requests map[string]int
}

// Answer is a scripted failure: a status and the headers to send with it.
type Answer struct {
	Status int
	Header http.Header
}

type failure struct{ status, times int }

// Script makes the next n requests, whatever they ask, answer status with
// header.
func (f *Faults) Script(status int, header http.Header, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.script = append(f.script, Answer{status, header})
	}
}

// Next counts a request and returns the scripted answer it gets, if any.
func (f *Faults) Next() (Answer, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total++
	if len(f.script) == 0 {
		return Answer{}, false
	}
	a := f.script[0]
	f.script = f.script[1:]
	return a, true
}

// Fail makes requests about key (a page) answer status, times times
// (< 0: until Fail(key, 0, 0)).
func (f *Faults) Fail(key string, status, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing == nil {
		f.failing = map[string]failure{}
	}
	if times == 0 {
		delete(f.failing, key)
		return
	}
	f.failing[key] = failure{status, times}
}

// Failing returns the status a request about key must answer, if Fail
// set one, and uses up one of its times.
func (f *Faults) Failing(key string) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.failing[key]
	if !ok {
		return 0, false
	}
	if fl.times > 0 {
		if fl.times--; fl.times == 0 {
			delete(f.failing, key)
		} else {
			f.failing[key] = fl
		}
	}
	return fl.status, true
}

// Count counts a request by route.
func (f *Faults) Count(route string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.requests == nil {
		f.requests = map[string]int{}
	}
	f.requests[route]++
}

// Requests returns how many requests were answered, in total and by route.
func (f *Faults) Requests() (int, map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total, maps.Clone(f.requests)
}

// Reset zeroes the counts.
func (f *Faults) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total, f.requests = 0, nil
}
