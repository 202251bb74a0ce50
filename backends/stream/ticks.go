package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// The allowed ranges of a stream's parameters, in milliseconds.
const (
	minIntervalMs = 10
	maxIntervalMs = 60000
	minDurationMs = 1
	maxDurationMs = 86400000
)

type params struct {
	interval time.Duration
	duration time.Duration
}

// checkParam reads one parameter; the error names it, the value and the allowed range.
func checkParam(name, raw string, present bool, lo, hi int64) (int64, error) {
	if !present || raw == "" {
		return 0, fmt.Errorf("%s is missing: give it in milliseconds, %d..%d", name, lo, hi)
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("%s %q: must be an integer number of milliseconds in %d..%d", name, raw, lo, hi)
	}
	return v, nil
}

// parseParams checks the interval and the duration, named as the request spells them; lookup
// gives a parameter's text and whether it was given.
func parseParams(intervalName, durationName string, lookup func(string) (string, bool)) (params, error) {
	raw, ok := lookup(intervalName)
	interval, err := checkParam(intervalName, raw, ok, minIntervalMs, maxIntervalMs)
	if err != nil {
		return params{}, err
	}
	raw, ok = lookup(durationName)
	duration, err := checkParam(durationName, raw, ok, minDurationMs, maxDurationMs)
	if err != nil {
		return params{}, err
	}
	return params{interval: time.Duration(interval) * time.Millisecond, duration: time.Duration(duration) * time.Millisecond}, nil
}

func queryParams(r *http.Request) (params, error) {
	q := r.URL.Query()
	return parseParams("interval", "duration", func(name string) (string, bool) {
		_, ok := q[name]
		return q.Get(name), ok
	})
}

// Why a stream ended, as logged.
const (
	endDone   = "duration over"
	endClient = "client gone"
	endDrain  = "server stopping"
)

// tick sends one message per slot until the duration is over, the client goes or the drain ends.
// A slot is floor(unix_ms / interval): messages go out at slot boundaries, so any client can tell
// which slots it missed between two streams. Every slot of the stream is sent, late when the sender
// fell behind (a busy machine): a slot a client misses is then the path's doing or a reconnect's,
// never the sender's; sent_unix_ms shows the lateness.
func (s *server) tick(ctx context.Context, p params, send func(slot, sentMs int64) error) (string, int64, error) {
	ms := p.interval.Milliseconds()
	deadline := time.NewTimer(p.duration)
	defer deadline.Stop()
	var sent int64
	slot := time.Now().UnixMilli()/ms + 1
	for {
		wait := time.NewTimer(max(0, time.Duration(slot*ms-time.Now().UnixMilli())*time.Millisecond))
		select {
		case <-ctx.Done():
			wait.Stop()
			return endClient, sent, nil
		case <-s.ending:
			wait.Stop()
			return endDrain, sent, nil
		case <-deadline.C:
			wait.Stop()
			return endDone, sent, nil
		case <-wait.C:
		}
		if err := send(slot, time.Now().UnixMilli()); err != nil {
			return endClient, sent, err
		}
		sent++
		slot++
	}
}

// begin registers a stream (false while stopping: no new streams then) and logs it.
func (s *server) begin(kind string, r *http.Request, p params) bool {
	if s.isStopping() {
		return false
	}
	s.open.Add(1)
	s.logger.Printf("stream open kind=%s remote=%s interval=%s duration=%s", kind, r.RemoteAddr, p.interval, p.duration)
	return true
}

func (s *server) finish(kind string, r *http.Request, reason string, sent int64, err error) {
	detail := ""
	if err != nil {
		detail = fmt.Sprintf(" error=%q", err.Error())
	}
	s.logger.Printf("stream close kind=%s remote=%s reason=%q messages=%d%s", kind, r.RemoteAddr, reason, sent, detail)
	s.open.Done()
}

// ticks is GET /stream/ticks: text/plain, one line "<slot> <sent_unix_ms>" per tick, flushed at once.
func (s *server) ticks(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "method "+r.Method+": only GET", http.StatusMethodNotAllowed)
		return
	}
	p, err := queryParams(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !s.begin("ticks", r, p) {
		http.Error(w, "stopping: no new streams", http.StatusServiceUnavailable)
		return
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Cache-Control", "no-store")
	// Proxies that buffer responses (nginx) pass this one through as it comes.
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	reason, sent, err := s.tick(r.Context(), p, func(slot, sentMs int64) error {
		if _, err := fmt.Fprintf(w, "%d %d\n", slot, sentMs); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	})
	s.finish("ticks", r, reason, sent, err)
}
