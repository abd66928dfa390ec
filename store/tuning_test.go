package store

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/docent-hq/docent"
)

// TestTuning: synonyms added from the console, settings, and a golden
// run's calibration survive in the store.
func TestTuning(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	for _, e := range []string{"wfh => remote work", "pto, paid time off"} {
		if err := db.AddSynonym(ctx, e, "ada"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.ListSynonyms(ctx)
	if err != nil || len(got) != 2 || got[0] != "wfh => remote work" || got[1] != "pto, paid time off" {
		t.Fatalf("ListSynonyms = %q, %v", got, err)
	}

	if _, ok, err := db.Setting(ctx, "answerer.decision"); ok || err != nil {
		t.Fatalf("unset setting: ok %v, err %v", ok, err)
	}
	for _, v := range []string{`{"bias":-1}`, `{"bias":-2}`} {
		if err := db.SetSetting(ctx, "answerer.decision", v, "ada"); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok, err := db.Setting(ctx, "answerer.decision"); !ok || err != nil || v != `{"bias":-2}` {
		t.Errorf("Setting = %q %v %v, want the last value set", v, ok, err)
	}

	run := docent.GoldenRun{StartedBy: "ada", Questions: 3}
	if err := db.StartGoldenRun(ctx, &run); err != nil {
		t.Fatal(err)
	}
	fit := json.RawMessage(`{"rule":{"bias":-2}}`)
	if err := db.SetCalibration(ctx, run.ID, fit); err != nil {
		t.Fatal(err)
	}
	back, err := db.GoldenRunByID(ctx, run.ID)
	if err != nil || string(back.Calibration) != string(fit) {
		t.Errorf("calibration = %s, %v; want %s", back.Calibration, err, fit)
	}
	if err := db.SetCalibration(ctx, run.ID+100, fit); err == nil {
		t.Error("SetCalibration of an unknown run succeeded")
	}
}
