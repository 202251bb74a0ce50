package bench

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"
)

// The end-of-run record (scenarios/contract.json runEnd): the runner's own totals, written to
// Prometheus once more after its end-of-test summary. k6's remote-write output sends every push
// once, and its last push is the one that carries the final counters: when that push fails, the
// series in Prometheus end short and nothing says so. The record is retried until Prometheus
// acknowledges it or the bound passes, so `make results` can check each runner's series against it
// and take the totals from it. It goes to the output's own endpoint (K6_PROMETHEUS_RW_SERVER_URL,
// with its basic-auth and bearer-token settings), one gauge series per field.

// RunEndMetric is the record's series name (scenarios/contract.json runEnd.metric).
const RunEndMetric = "k6_bench_run_end"

// runEndLabel names the field of each series (runEnd.label).
const runEndLabel = "field"

// The waits between attempts: short first (a blip), then longer (a network cut), at most this.
const (
	runEndFirstWait = 500 * time.Millisecond
	runEndMaxWait   = 5 * time.Second
	// one attempt's longest wait for an answer
	runEndAttemptTimeout = 10 * time.Second
)

// sendRunEnd(fields, labels, timeoutMs) -> {configured, delivered, attempts, error, end_unix,
// push_interval_s}: writes one series per field (value: the number, labels: labels plus
// field=<name>) at one time, the first attempt's, so a retry writes the same samples. Retries on
// any transport error or 5xx/429 answer until timeoutMs has passed; another 4xx is final (the
// request itself is refused). configured is false without K6_PROMETHEUS_RW_SERVER_URL: nothing
// is sent.
//
// A record that did not arrive fails the run: the runner then exits 110 (k6's "marked as failed")
// instead of 0, after its summary is written (failAtExit).
func (m *instance) sendRunEnd(fields map[string]interface{}, labels map[string]interface{}, timeoutMs float64) map[string]interface{} {
	out := sendRunEndTo(os.Getenv("K6_PROMETHEUS_RW_SERVER_URL"), numbers(fields), texts(labels), timeoutMs)
	if out["configured"] == true && out["delivered"] != true {
		m.failAtExit(fmt.Sprintf("the end-of-run record did not reach Prometheus (%v attempts: %v)", out["attempts"], out["error"]))
	}
	return out
}

// k6's process-exit event and exit code for a run marked as failed (go.k6.io/k6/internal/event's
// Exit, the sixth Type; errext/exitcodes' MarkedAsFailed). The event package is internal to k6, so
// its value is written here; the runner build's test (an undelivered record exits 110) fails if
// either moves.
const (
	k6ExitEvent    = 6
	markedAsFailed = 110
)

// failAtExit makes the run exit markedAsFailed when it would otherwise exit 0. k6 decides the exit
// code before it runs handleSummary (where the record is sent), and an extension cannot change it;
// it can act on the Exit event, which k6 emits after the summary is written and the outputs are
// stopped, just before the process ends. A run already failing (a crossed threshold: 99, a script
// error: 107, ...) keeps its own code.
func (m *instance) failAtExit(reason string) {
	_, events := m.vu.Events().Global.Subscribe(k6ExitEvent)
	go func() {
		for e := range events {
			if exitError(e.Data) == nil {
				fmt.Fprintf(os.Stderr, "bench: %s: the run is marked as failed (exit %d): its merged result may lack this runner's totals\n",
					reason, markedAsFailed)
				os.Exit(markedAsFailed)
			}
			e.Done()
		}
	}()
}

// exitError: the error k6 is about to exit with (the Exit event's ExitData.Error), read by name as
// its type is internal to k6. Data of another shape counts as an error-free exit, so the run still
// fails (fail closed).
func exitError(data interface{}) error {
	v := reflect.Indirect(reflect.ValueOf(data))
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("Error")
	if !f.IsValid() || f.Kind() != reflect.Interface || f.IsNil() {
		return nil
	}
	err, _ := f.Interface().(error)
	return err
}

// numbers: the finite numbers of a JS object (anything else left out: a null latency, say).
func numbers(in map[string]interface{}) map[string]float64 {
	out := make(map[string]float64, len(in))
	for k, v := range in {
		var f float64
		switch n := v.(type) {
		case int64:
			f = float64(n)
		case float64:
			f = n
		case int:
			f = float64(n)
		default:
			continue
		}
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			out[k] = f
		}
	}
	return out
}

// texts: the labels of a JS object as strings.
func texts(in map[string]interface{}) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		if v != nil {
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}

func sendRunEndTo(url string, fields map[string]float64, labels map[string]string, timeoutMs float64) map[string]interface{} {
	out := map[string]interface{}{"configured": url != "", "delivered": false, "attempts": 0, "error": nil}
	if url == "" {
		return out
	}
	now := time.Now()
	interval := pushIntervalS(os.Getenv("K6_PROMETHEUS_RW_PUSH_INTERVAL"))
	all := make(map[string]float64, len(fields)+2)
	for k, v := range fields {
		all[k] = v
	}
	all["end_unix"] = float64(now.UnixMilli()) / 1000
	all["push_interval_s"] = interval
	out["end_unix"], out["push_interval_s"] = all["end_unix"], interval
	body := snappyLiteral(encodeWriteRequest(RunEndMetric, runEndLabel, all, labels, now.UnixMilli()))
	deadline := now.Add(time.Duration(timeoutMs * float64(time.Millisecond)))
	attempts, err := postUntil(url, body, deadline)
	out["attempts"] = attempts
	if err != nil {
		out["error"] = err.Error()
	} else {
		out["delivered"] = true
	}
	return out
}

// pushIntervalS: K6_PROMETHEUS_RW_PUSH_INTERVAL in seconds (a Go duration; 5 s, the output's default,
// when unset or unreadable).
func pushIntervalS(text string) float64 {
	if d, err := time.ParseDuration(text); err == nil && d > 0 {
		return d.Seconds()
	}
	return 5
}

// postUntil posts body until Prometheus answers 2xx or the deadline passes; returns the attempts
// made and the last error (nil: delivered).
// An attempt lasts at most runEndAttemptTimeout and never past the deadline, so the bound holds
// when Prometheus' packets are dropped (each attempt then waits for its timeout).
func postUntil(url string, body []byte, deadline time.Time) (int, error) {
	wait := runEndFirstWait
	for attempt := 1; ; attempt++ {
		timeout := time.Until(deadline)
		if timeout > runEndAttemptTimeout {
			timeout = runEndAttemptTimeout
		}
		if timeout < runEndFirstWait {
			timeout = runEndFirstWait
		}
		retry, err := postOnce(&http.Client{Timeout: timeout}, url, body)
		if err == nil {
			return attempt, nil
		}
		if !retry {
			return attempt, err
		}
		if time.Now().Add(wait).After(deadline) {
			return attempt, fmt.Errorf("not acknowledged after %d attempts: %w", attempt, err)
		}
		time.Sleep(wait)
		if wait *= 2; wait > runEndMaxWait {
			wait = runEndMaxWait
		}
	}
}

// postOnce: one remote-write request; retry says whether another attempt may succeed.
func postOnce(client *http.Client, url string, body []byte) (retry bool, err error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("remote-write URL %q: %w", url, err)
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	if user := os.Getenv("K6_PROMETHEUS_RW_USERNAME"); user != "" {
		req.SetBasicAuth(user, os.Getenv("K6_PROMETHEUS_RW_PASSWORD"))
	}
	if token := os.Getenv("K6_PROMETHEUS_RW_BEARER_TOKEN"); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return true, err
	}
	detail, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	_ = resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	err = fmt.Errorf("%s answered HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(string(detail)))
	return resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests, err
}

// encodeWriteRequest: a remote-write WriteRequest (prometheus/prompb: WriteRequest.timeseries = 1;
// TimeSeries.labels = 1, samples = 2; Label.name = 1, value = 2; Sample.value = 1, timestamp = 2),
// one series per field, labels sorted by name as the protocol asks. Written by hand: the record is
// a few series, and k6's own protobuf dependencies differ between k6 releases.
func encodeWriteRequest(metric, fieldLabel string, fields map[string]float64, labels map[string]string, ms int64) []byte {
	var req []byte
	for _, field := range sortedKeys(fields) {
		all := map[string]string{"__name__": metric, fieldLabel: field}
		for k, v := range labels {
			if k != "__name__" && k != fieldLabel && v != "" {
				all[k] = v
			}
		}
		var ts []byte
		for _, k := range sortedKeys(all) {
			ts = appendBytes(ts, 1, appendBytes(appendBytes(nil, 1, []byte(k)), 2, []byte(all[k])))
		}
		var sample []byte
		sample = append(sample, 1<<3|1) // field 1, fixed64
		sample = binary.LittleEndian.AppendUint64(sample, math.Float64bits(fields[field]))
		sample = append(sample, 2<<3|0) // field 2, varint
		sample = binary.AppendUvarint(sample, uint64(ms))
		ts = appendBytes(ts, 2, sample)
		req = appendBytes(req, 1, ts)
	}
	return req
}

// sortedKeys: a map's keys in order (the record's series and labels are written sorted).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// appendBytes appends a length-delimited protobuf field.
func appendBytes(b []byte, field int, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

// snappyLiteral: data in the snappy block format that remote write requires, as literals only (a
// valid block every snappy decoder reads; the record is small, compressing it would gain nothing).
func snappyLiteral(data []byte) []byte {
	out := binary.AppendUvarint(nil, uint64(len(data)))
	for len(data) > 0 {
		n := len(data)
		if n > 1<<16 {
			n = 1 << 16
		}
		// a literal of n bytes: tag 0b00 with n-1 in the next two bytes (tag value 61)
		out = append(out, 61<<2, byte((n-1)&0xff), byte((n-1)>>8))
		out = append(out, data[:n]...)
		data = data[n:]
	}
	return out
}
