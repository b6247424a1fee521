package policies

import (
	"bytes"
	"encoding/json"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// jsonStrict decodes refusing unknown fields, so a misspelt policy field
// fails here rather than being dropped by the API server.
func jsonStrict(b []byte, into any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(into)
}
