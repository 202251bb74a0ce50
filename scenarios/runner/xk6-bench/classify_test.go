package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// The taxonomy's cases are one table, scenarios/tests/classify-cases.json, which unit.js runs through
// the JS binding too: here they test the Go rules without a k6 build (the rules change, k6 is not rebuilt).
const casesFile = "../../tests/classify-cases.json"

func TestClassifyEveryCase(t *testing.T) {
	data, err := os.ReadFile(casesFile)
	if err != nil {
		t.Fatal(err)
	}
	var table struct{ Cases [][]interface{} }
	if err := json.Unmarshal(data, &table); err != nil {
		t.Fatalf("%s: %v", casesFile, err)
	}
	if len(table.Cases) < 40 {
		t.Fatalf("%s: %d cases, expected the whole table", casesFile, len(table.Cases))
	}
	for _, c := range table.Cases {
		status, code := int(c[0].(float64)), int(c[1].(float64))
		message, written, tls := c[2].(string), c[3].(bool), c[4].(bool)
		want := fmt.Sprintf("%s/%s", c[5], c[6])
		got := "success"
		if found := classify(status, code, message, written, tls); found != nil {
			got = found.class + "/" + found.cause
		}
		if got != want {
			t.Errorf("classify(%d, %d, %q, written=%v, tls=%v) = %s, want %s", status, code, message, written, tls, got, want)
		}
	}
}

func TestClassifySuccessHasNoClass(t *testing.T) {
	for _, status := range []int{200, 204, 301, 399} {
		if found := classify(status, 0, "", true, false); found != nil {
			t.Errorf("classify(%d, 0) = %v, want nil (a success)", status, *found)
		}
	}
}
