package tenant

import "encoding/json"

// decode reads a JSON-shaped value into a Go type, with errors that name
// the field.
func decode(v any, into any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}
