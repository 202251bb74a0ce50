package bench

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A Prometheus stand-in that refuses the first `failures` pushes with status, then acknowledges.
func flakyReceiver(t *testing.T, failures int32, status int) (*httptest.Server, *atomic.Int32) {
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Encoding") != "snappy" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("headers %v", r.Header)
		}
		if seen.Add(1) <= failures {
			w.WriteHeader(status)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestRunEndRetriesUntilAcknowledged(t *testing.T) {
	srv, seen := flakyReceiver(t, 2, http.StatusServiceUnavailable)
	out := sendRunEndTo(srv.URL, map[string]float64{"requests": 9000}, map[string]string{"testid": "t"}, 10000)
	if out["delivered"] != true || out["attempts"] != 3 || seen.Load() != 3 {
		t.Fatalf("want delivered on the third attempt, got %v (server saw %d)", out, seen.Load())
	}
}

func TestRunEndGivesUpAtItsBound(t *testing.T) {
	srv, _ := flakyReceiver(t, 1000, http.StatusBadGateway)
	start := time.Now()
	out := sendRunEndTo(srv.URL, map[string]float64{"requests": 1}, nil, 2000)
	if out["delivered"] != false || out["error"] == nil || out["attempts"].(int) < 2 {
		t.Fatalf("want undelivered after several attempts, got %v", out)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("took %v past a 2 s bound", took)
	}
}

func TestRunEndDoesNotRetryARefusal(t *testing.T) {
	srv, seen := flakyReceiver(t, 1000, http.StatusBadRequest)
	out := sendRunEndTo(srv.URL, map[string]float64{"requests": 1}, nil, 10000)
	if out["delivered"] != false || out["attempts"] != 1 || seen.Load() != 1 {
		t.Fatalf("a 400 is final: got %v (server saw %d)", out, seen.Load())
	}
}

func TestRunEndWithoutRemoteWriteSendsNothing(t *testing.T) {
	out := sendRunEndTo("", map[string]float64{"requests": 1}, nil, 1000)
	if out["configured"] != false || out["attempts"] != 0 {
		t.Fatalf("got %v", out)
	}
}

func TestSnappyLiteralFraming(t *testing.T) {
	data := make([]byte, 70000)
	out := snappyLiteral(data)
	// varint 70000 (3 bytes), then a 65536-byte literal and a 4464-byte one, each with a 3-byte tag
	if want := 3 + 3 + 65536 + 3 + 4464; len(out) != want {
		t.Fatalf("len %d, want %d", len(out), want)
	}
	if out[3] != 61<<2 || out[4] != 0xff || out[5] != 0xff {
		t.Fatalf("first tag % x", out[3:6])
	}
}

// exitError reads the Exit event's data by field name: k6's ExitData has the shape below.
func TestExitErrorReadsTheExitDataByName(t *testing.T) {
	type exitData struct{ Error error }
	failed := errors.New("thresholds crossed")
	for _, c := range []struct {
		data interface{}
		want error
	}{
		{&exitData{Error: failed}, failed},
		{&exitData{}, nil},
		{exitData{Error: failed}, failed},
		{nil, nil},
		{"another shape", nil},
		{&struct{ Error string }{"not an error"}, nil},
	} {
		if got := exitError(c.data); got != c.want {
			t.Errorf("exitError(%#v) = %v, want %v", c.data, got, c.want)
		}
	}
}
