package bench

import "strings"

// The error taxonomy (scenarios/lib/errors.js says what each class means; scenarios/contract.json
// lists the classes and causes, and the unit tests run every case below through classifyExport):
// a failure is classed by what failed, not by k6's error code alone (k6 gives a TLS handshake the
// server cut the code of a read error). k6 error codes: go.k6.io/k6 lib/netext/httpext/error_codes.go.

type errorClass struct{ class, cause string }

// One value per class and cause, so that classifying allocates nothing.
var (
	http5xx        = &errorClass{"http_5xx", "status"}
	http4xx        = &errorClass{"http_4xx", "status"}
	otherOther     = &errorClass{"other", "other"}
	timeoutTimeout = &errorClass{"timeout", "timeout"}
	connDNS        = &errorClass{"connection", "dns"}
	connRefused    = &errorClass{"connection", "refused"}
	connOther      = &errorClass{"connection", "other"}
	connReset      = &errorClass{"connection", "reset"}
	connTLS        = &errorClass{"connection", "tls_handshake"}
	readReset      = &errorClass{"read", "reset"}
	readEOF        = &errorClass{"read", "eof"}
	readOther      = &errorClass{"read", "other"}
)

const (
	codeEOF   = 1000 // k6: unexpected EOF
	codeReset = 1220 // k6: connection reset by peer
)

// classify(status, errorCode, message, written, tls): the class of a failed request, nil for a
// success. message: k6's error text ("dial: connection reset by peer"); written: whether the
// request was written to a connection (k6 times sending and waiting only after that); tls: an https
// target.
func classify(status, errorCode int, message string, written, tls bool) *errorClass {
	switch {
	case status >= 500 && status <= 599:
		return http5xx
	case status >= 400 && status <= 499:
		return http4xx
	case errorCode == 0:
		if status > 0 {
			return nil
		}
		return otherOther
	case errorCode == 1050:
		return timeoutTimeout
	case errorCode >= 1100 && errorCode <= 1111:
		return connDNS
	case errorCode == 1212:
		return connRefused
	case errorCode >= 1210 && errorCode <= 1213:
		return connOther
	case errorCode >= 1300 && errorCode <= 1399:
		return connTLS
	}
	broken := errorCode == codeEOF || (errorCode >= 1200 && errorCode <= 1202) || errorCode == codeReset
	switch {
	case !broken:
		return otherOther
	case startsWithWord(message, "dial"):
		if errorCode == codeReset {
			return connReset
		}
		return connOther
	case !written:
		// Nothing written: the connection failed on the way up; over TLS that is the handshake.
		if tls {
			return connTLS
		}
		if errorCode == codeReset {
			return connReset
		}
		return connOther
	case errorCode == codeReset:
		return readReset
	case errorCode == codeEOF:
		return readEOF
	}
	return readOther
}

// startsWithWord: text starts with word as a whole word (what the regex /^word\b/ tests).
func startsWithWord(text, word string) bool {
	if !strings.HasPrefix(text, word) {
		return false
	}
	if len(text) == len(word) {
		return true
	}
	c := text[len(word)]
	wordChar := (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'
	return !wordChar
}

// classifyExport(status, errorCode, message, written, tls) -> [class, cause] or null: classify for
// JavaScript (scenarios/lib/errors.js classifyError: the unit tests, and countError for responses of
// k6's own http module).
func classifyExport(status, errorCode int, message string, written, tls bool) interface{} {
	c := classify(status, errorCode, message, written, tls)
	if c == nil {
		return nil
	}
	return []string{c.class, c.cause}
}
