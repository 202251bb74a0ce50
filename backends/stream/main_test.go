package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestMain lets a test run the real command in a child process (SIGTERM, flags).
func TestMain(m *testing.M) {
	if os.Getenv("BENCH_STREAM_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// start serves a server on 127.0.0.1 (a port of its own) until the test ends.
func start(t *testing.T) (*server, *http.Server, string) {
	t.Helper()
	s := newServer(log.New(io.Discard, "", 0))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s.handler()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { s.end(); _ = srv.Close() })
	return s, srv, ln.Addr().String()
}

// checkTicks asserts lines "<slot> <sent_ms>" with consecutive slots, none sent before its slot
// began nor (on an idle loopback) long after it.
func checkTicks(t *testing.T, lines []string, intervalMs int64, min int) {
	t.Helper()
	if len(lines) < min {
		t.Fatalf("%d messages, want at least %d: %q", len(lines), min, lines)
	}
	var prev int64
	for i, line := range lines {
		var slot, sent int64
		if _, err := fmt.Sscanf(line, "%d %d", &slot, &sent); err != nil {
			t.Fatalf("message %d %q: %v", i, line, err)
		}
		if sent < slot*intervalMs || sent > (slot+5)*intervalMs {
			t.Errorf("message %d %q: slot %d sent at %d ms, in slot %d", i, line, slot, sent, sent/intervalMs)
		}
		if i > 0 && slot != prev+1 {
			t.Errorf("message %d %q: slot %d after %d (every slot is sent)", i, line, slot, prev)
		}
		prev = slot
	}
}

func readLines(t *testing.T, body io.Reader) ([]string, error) {
	t.Helper()
	var lines []string
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}

func TestTicksOverHTTP1(t *testing.T) {
	_, _, addr := start(t)
	resp, err := http.Get("http://" + addr + "/stream/ticks?interval=20&duration=300")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 1 || resp.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("status %d, HTTP/%d, content type %q", resp.StatusCode, resp.ProtoMajor, resp.Header.Get("Content-Type"))
	}
	lines, err := readLines(t, resp.Body)
	if err != nil {
		t.Fatalf("the stream did not end cleanly: %v", err)
	}
	// 300 ms at 20 ms: 15 slot boundaries, 14 or 15 of them before the end.
	checkTicks(t, lines, 20, 13)
	if len(lines) > 16 {
		t.Errorf("%d messages in 300 ms at 20 ms", len(lines))
	}
}

// Each message is flushed as it is sent: the first arrives long before the stream ends.
func TestTicksAreFlushedAtOnce(t *testing.T) {
	_, _, addr := start(t)
	t0 := time.Now()
	resp, err := http.Get("http://" + addr + "/stream/ticks?interval=50&duration=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || time.Since(t0) > 2*time.Second {
		t.Fatalf("first message %q after %s: %v", line, time.Since(t0), err)
	}
}

func TestTicksOverH2CPriorKnowledge(t *testing.T) {
	_, _, addr := start(t)
	client := &http.Client{Transport: &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	resp, err := client.Get("http://" + addr + "/stream/ticks?interval=20&duration=200")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
		t.Fatalf("status %d over HTTP/%d, want 200 over HTTP/2", resp.StatusCode, resp.ProtoMajor)
	}
	lines, err := readLines(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	checkTicks(t, lines, 20, 8)
}

// A client asking to upgrade to h2c gets 101 Switching Protocols.
func TestH2CUpgrade(t *testing.T) {
	_, _, addr := start(t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: bench\r\nConnection: Upgrade, HTTP2-Settings\r\n"+
		"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 101") {
		t.Fatalf("status line %q (%v), want 101", status, err)
	}
}

func TestHealthz(t *testing.T) {
	s, _, addr := start(t)
	for _, path := range []string{"/healthz", "/stream/healthz"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "ok\n" {
			t.Errorf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
	s.stop()
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("/healthz while stopping: %d, want 503", resp.StatusCode)
	}
}

func TestWebSocketMessagesThenNormalClose(t *testing.T) {
	_, _, addr := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+addr+"/stream/ws?interval=20&duration=300", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	var lines []string
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != websocket.StatusNormalClosure {
				t.Fatalf("ended with %v (close code %d), want a normal close 1000", err, code)
			}
			break
		}
		if typ != websocket.MessageText {
			t.Fatalf("message type %v", typ)
		}
		lines = append(lines, string(msg))
	}
	checkTicks(t, lines, 20, 13)
}

// watch opens Ticks/Watch through the hand-written descriptor, as a client with the .proto would.
func watch(ctx context.Context, t *testing.T, addr string, fields map[string]any) grpc.ClientStream {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	stream, err := conn.NewStream(ctx, &ticksServiceDesc.Streams[0], "/"+ticksService+"/"+watchMethod)
	if err != nil {
		t.Fatal(err)
	}
	req, err := structpb.NewStruct(fields)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.SendMsg(req); err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	return stream
}

// receive reads slots until the stream ends; the error is nil on a clean end (status OK).
func receive(stream grpc.ClientStream) ([]int64, error) {
	var slots []int64
	for {
		msg := new(wrapperspb.Int64Value)
		if err := stream.RecvMsg(msg); err != nil {
			if errors.Is(err, io.EOF) {
				return slots, nil
			}
			return slots, err
		}
		slots = append(slots, msg.GetValue())
	}
}

func TestGRPCWatch(t *testing.T) {
	_, _, addr := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t0 := time.Now().UnixMilli()
	slots, err := receive(watch(ctx, t, addr, map[string]any{"interval_ms": 20, "duration_ms": 300}))
	if err != nil {
		t.Fatalf("stream ended with %v, want OK", err)
	}
	if len(slots) < 13 || len(slots) > 16 {
		t.Fatalf("%d slots in 300 ms at 20 ms: %v", len(slots), slots)
	}
	for i, slot := range slots {
		if i > 0 && slot != slots[i-1]+1 {
			t.Errorf("slot %d after %d", slot, slots[i-1])
		}
	}
	if slots[0] < t0/20 || slots[0] > t0/20+2 {
		t.Errorf("first slot %d, opened at slot %d", slots[0], t0/20)
	}
}

func TestBadParameters(t *testing.T) {
	_, _, addr := start(t)
	cases := []struct{ query, want string }{
		{"duration=100", "interval is missing: give it in milliseconds, 10..60000"},
		{"interval=9&duration=100", `interval "9": must be an integer number of milliseconds in 10..60000`},
		{"interval=60001&duration=100", `interval "60001"`},
		{"interval=1s&duration=100", `interval "1s"`},
		{"interval=100", "duration is missing: give it in milliseconds, 1..86400000"},
		{"interval=100&duration=0", `duration "0": must be an integer number of milliseconds in 1..86400000`},
		{"interval=100&duration=86400001", `duration "86400001"`},
	}
	for _, path := range []string{"/stream/ticks", "/stream/ws"} {
		for _, c := range cases {
			resp, err := http.Get("http://" + addr + path + "?" + c.query)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 400 || !strings.Contains(string(body), c.want) {
				t.Errorf("%s?%s: %d %q, want 400 with %q", path, c.query, resp.StatusCode, body, c.want)
			}
		}
	}
	grpcCases := []struct {
		fields map[string]any
		want   string
	}{
		{map[string]any{"duration_ms": 100}, "interval_ms is missing: give it in milliseconds, 10..60000"},
		{map[string]any{"interval_ms": 5, "duration_ms": 100}, `interval_ms "5": must be an integer number of milliseconds in 10..60000`},
		{map[string]any{"interval_ms": 10.5, "duration_ms": 100}, `interval_ms "10.5"`},
		{map[string]any{"interval_ms": 100, "duration_ms": "x"}, `duration_ms "x"`},
		{map[string]any{"interval_ms": 100}, "duration_ms is missing"},
	}
	for _, c := range grpcCases {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := receive(watch(ctx, t, addr, c.fields))
		cancel()
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), c.want) {
			t.Errorf("%v: %v, want InvalidArgument with %q", c.fields, err, c.want)
		}
	}
}

// openAll opens one stream of each kind, each asked to last a minute, and waits for its first message.
func openAll(ctx context.Context, t *testing.T, addr string) (*bufio.Reader, *websocket.Conn, grpc.ClientStream) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/stream/ticks?interval=20&duration=60000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	ticks := bufio.NewReader(resp.Body)
	if _, err := ticks.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/stream/ws?interval=20&duration=60000", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	if _, _, err := ws.Read(ctx); err != nil {
		t.Fatal(err)
	}
	g := watch(ctx, t, addr, map[string]any{"interval_ms": 20, "duration_ms": 60000})
	if err := g.RecvMsg(new(wrapperspb.Int64Value)); err != nil {
		t.Fatal(err)
	}
	return ticks, ws, g
}

// checkCleanEnds asserts each kind's clean end on a stopping server: the ticks body just ends,
// WebSocket 1001, gRPC Unavailable; and returns how long after `from` they all had.
func checkCleanEnds(ctx context.Context, t *testing.T, ticks *bufio.Reader, ws *websocket.Conn, g grpc.ClientStream) {
	t.Helper()
	if _, err := readLines(t, ticks); err != nil {
		t.Errorf("ticks: ended with %v, want a clean end", err)
	}
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			if code := websocket.CloseStatus(err); code != websocket.StatusGoingAway {
				t.Errorf("websocket: ended with %v (close code %d), want 1001", err, code)
			}
			break
		}
	}
	if _, err := receive(g); status.Code(err) != codes.Unavailable {
		t.Errorf("grpc: ended with %v, want Unavailable", err)
	}
}

func TestStopWithoutDrainEndsStreamsAtOnce(t *testing.T) {
	s, srv, addr := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ticks, ws, g := openAll(ctx, t, addr)
	t0 := time.Now()
	go s.shutdown(srv, 0, 5*time.Second)
	checkCleanEnds(ctx, t, ticks, ws, g)
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("streams ended %s after the stop, want at once", took)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Errorf("the listener still accepts after the stop")
	}
}

// With --drain the open streams keep getting messages after the stop, then end as above.
func TestStopWithDrainKeepsStreamsThenEndsThem(t *testing.T) {
	s, srv, addr := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ticks, ws, g := openAll(ctx, t, addr)
	t0 := time.Now()
	go s.shutdown(srv, 600*time.Millisecond, 5*time.Second)
	time.Sleep(300 * time.Millisecond)
	if !s.isStopping() {
		t.Fatal("not stopping")
	}
	// Messages still come during the drain (the first ones of each kind were read by openAll).
	if line, err := ticks.ReadString('\n'); err != nil {
		t.Errorf("ticks during the drain: %q %v", line, err)
	}
	if _, _, err := ws.Read(ctx); err != nil {
		t.Errorf("websocket during the drain: %v", err)
	}
	if err := g.RecvMsg(new(wrapperspb.Int64Value)); err != nil {
		t.Errorf("grpc during the drain: %v", err)
	}
	checkCleanEnds(ctx, t, ticks, ws, g)
	if took := time.Since(t0); took < 500*time.Millisecond || took > 3*time.Second {
		t.Errorf("streams ended %s after the stop, want about the 600 ms drain", took)
	}
}

// The real command: SIGTERM ends an open stream cleanly and the process exits 0.
func TestSIGTERMEndsTheCommand(t *testing.T) {
	port := freePort(t)
	cmd := exec.Command(os.Args[0], "--listen", "127.0.0.1:"+strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "BENCH_STREAM_RUN_MAIN=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	url := fmt.Sprintf("http://127.0.0.1:%d/stream/ticks?interval=20&duration=60000", port)
	var resp *http.Response
	var err error
	for i := 0; i < 100; i++ {
		if resp, err = http.Get(url); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the command never answered: %v\n%s", err, stderr.String())
	}
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	if _, err := body.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if _, err := readLines(t, body); err != nil {
		t.Errorf("ticks after SIGTERM: %v, want a clean end", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"stream open kind=ticks", `stream close kind=ticks`, `reason="server stopping"`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, stderr.String())
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// The descriptor written by hand must match the .proto k6 loads.
func TestDescriptorMatchesTheProto(t *testing.T) {
	text, err := os.ReadFile("../../scenarios/lib/ticks.proto")
	if err != nil {
		t.Fatal(err)
	}
	src := string(text)
	pkg := regexp.MustCompile(`(?m)^package\s+([\w.]+);`).FindStringSubmatch(src)
	svc := regexp.MustCompile(`(?m)^service\s+(\w+)\s*\{`).FindStringSubmatch(src)
	rpc := regexp.MustCompile(`rpc\s+(\w+)\s*\(\s*([\w.]+)\s*\)\s*returns\s*\(\s*(stream\s+)?([\w.]+)\s*\)`).FindStringSubmatch(src)
	if pkg == nil || svc == nil || rpc == nil {
		t.Fatalf("ticks.proto: package %v, service %v, rpc %v", pkg, svc, rpc)
	}
	if got := pkg[1] + "." + svc[1]; got != ticksServiceDesc.ServiceName {
		t.Errorf("proto service %s, Go %s", got, ticksServiceDesc.ServiceName)
	}
	sd := ticksServiceDesc.Streams[0]
	if rpc[1] != sd.StreamName || rpc[3] == "" || !sd.ServerStreams || sd.ClientStreams {
		t.Errorf("proto rpc %q (server stream %v), Go %s server %v client %v", rpc[1], rpc[3] != "", sd.StreamName, sd.ServerStreams, sd.ClientStreams)
	}
	req := string((&structpb.Struct{}).ProtoReflect().Descriptor().FullName())
	res := string((&wrapperspb.Int64Value{}).ProtoReflect().Descriptor().FullName())
	if rpc[2] != req || rpc[4] != res {
		t.Errorf("proto %s -> %s, Go %s -> %s", rpc[2], rpc[4], req, res)
	}
}

// A sender held up (a busy machine) sends the slots it fell behind on late, none skipped: a gap a
// client sees is never the sender's.
func TestASenderBehindSendsEverySlotLate(t *testing.T) {
	s := newServer(log.New(io.Discard, "", 0))
	var slots []int64
	reason, sent, err := s.tick(context.Background(), params{interval: 20 * time.Millisecond, duration: 300 * time.Millisecond},
		func(slot, _ int64) error {
			if len(slots) == 0 {
				time.Sleep(100 * time.Millisecond) // five slots late
			}
			slots = append(slots, slot)
			return nil
		})
	if reason != endDone || err != nil || int(sent) != len(slots) || len(slots) < 12 {
		t.Fatalf("%s %v: %d sent, slots %v", reason, err, sent, slots)
	}
	for i := 1; i < len(slots); i++ {
		if slots[i] != slots[i-1]+1 {
			t.Fatalf("slot %d after %d: %v", slots[i], slots[i-1], slots)
		}
	}
}
