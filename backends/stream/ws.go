package main

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

// websocket is GET /stream/ws: one text message "<slot> <sent_unix_ms>" per tick, then a normal
// close (1000) when the duration is over, or 1001 (going away) when the server stops.
func (s *server) websocket(w http.ResponseWriter, r *http.Request) {
	p, err := queryParams(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s.isStopping() {
		http.Error(w, "stopping: no new streams", http.StatusServiceUnavailable)
		return
	}
	// The benchmark's clients are not browsers and the stream carries nothing of a user's: any
	// Origin (the controller may rewrite it) is accepted.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept has answered the bad handshake
	}
	if !s.begin("websocket", r, p) {
		_ = c.Close(websocket.StatusGoingAway, "server stopping")
		return
	}
	// CloseRead answers the client's pings and close; its context ends when the client goes.
	ctx := c.CloseRead(r.Context())
	reason, sent, err := s.tick(ctx, p, func(slot, sentMs int64) error {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return c.Write(wctx, websocket.MessageText, []byte(strconv.FormatInt(slot, 10)+" "+strconv.FormatInt(sentMs, 10)))
	})
	switch {
	case err != nil:
		_ = c.CloseNow()
	case reason == endDrain:
		_ = c.Close(websocket.StatusGoingAway, "server stopping")
	case reason == endDone:
		_ = c.Close(websocket.StatusNormalClosure, "duration over")
	default:
		_ = c.CloseNow()
	}
	s.finish("websocket", r, reason, sent, err)
}
