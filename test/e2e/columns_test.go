//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// printed is what `kubectl get` prints for one object: its printer columns
// by name, as the API server renders them (the Table form of a GET).
func printed(t *testing.T, path string) (map[string]string, error) {
	t.Helper()
	hc, err := rest.HTTPClientFor(restCfg)
	if err != nil {
		return nil, fmt.Errorf("cannot make an HTTP client: %w", err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, restCfg.Host+path, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot make the request: %w", err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	rsp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot GET %s: %w", path, err)
	}
	defer rsp.Body.Close()
	var tbl metav1.Table
	if err := json.NewDecoder(rsp.Body).Decode(&tbl); err != nil {
		return nil, fmt.Errorf("cannot decode the table of %s: %w", path, err)
	}
	if len(tbl.Rows) != 1 {
		return nil, fmt.Errorf("%s: %d rows", path, len(tbl.Rows))
	}
	out := map[string]string{}
	for i, c := range tbl.ColumnDefinitions {
		if i < len(tbl.Rows[0].Cells) {
			out[c.Name] = fmt.Sprint(tbl.Rows[0].Cells[i])
		}
	}
	return out, nil
}
