//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// scaleRecord is one make scale run, as docs/scale/<settings>-<N>.json
// keeps it.
type scaleRecord struct {
	N                int               `json:"n"`
	Settings         string            `json:"settings"`
	Periods          map[string]string `json:"periods"`
	Routes           int               `json:"routesPerTenant"`
	Date             string            `json:"date"`
	Window           float64           `json:"windowSeconds"`
	Baseline         scalePhase        `json:"baseline"`
	ConvergeTenants  float64           `json:"convergeTenantsSeconds"`
	ConvergeGateways float64           `json:"convergeGatewaysSeconds"`
	Convergence      scalePhase        `json:"convergence"`
	Settle           float64           `json:"settleSeconds,omitempty"`
	Steady           scalePhase        `json:"steady"`
	RouteP50         float64           `json:"routeChangeP50Seconds"`
	RouteMax         float64           `json:"routeChangeMaxSeconds"`
}

// scalePhase is what one stretch of a run cost: API requests per second (total
// and the busiest kinds), CPU in percent of a core and resident MiB by
// component, function calls per second, and the load average at its end.
type scalePhase struct {
	Seconds        float64            `json:"seconds"`
	APIPerSecond   float64            `json:"apiRequestsPerSecond"`
	Top            []rate             `json:"top"`
	CPU            map[string]float64 `json:"cpuPercentOfACore"`
	RSSMiB         map[string]float64 `json:"rssMiB"`
	CallsPerSecond float64            `json:"functionCallsPerSecond"`
	Load           string             `json:"loadavg"`
}

// rate is the requests per second of one "VERB resource".
type rate struct {
	What      string  `json:"what"`
	PerSecond float64 `json:"perSecond"`
}

func (p scalePhase) cpuTotal() float64 {
	var n float64
	for _, c := range scaleComponents {
		n += p.CPU[c]
	}
	return n
}

// The generated part of docs/benchmarks.md lies between these markers; the rest
// of the file is prose the test leaves alone.
const (
	scaleBegin = "<!-- scale:begin (written by make scale; do not edit) -->"
	scaleEnd   = "<!-- scale:end -->"
)

// writeScale records the run and rewrites docs/benchmarks.md's table and
// docs/scale.png from every run recorded.
func writeScale(docs string, rec scaleRecord) error {
	dir := filepath.Join(docs, "scale")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode the run: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.json", rec.Settings, rec.N)), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("cannot record the run: %w", err)
	}
	recs, err := readRecords(dir)
	if err != nil {
		return err
	}
	md := filepath.Join(docs, "benchmarks.md")
	old, err := os.ReadFile(md)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("cannot read %s: %w", md, err)
	}
	if err := os.WriteFile(md, []byte(withTable(string(old), scaleTable(recs))), 0o600); err != nil {
		return fmt.Errorf("cannot write %s: %w", md, err)
	}
	var img bytes.Buffer
	if err := png.Encode(&img, scalePlot(recs)); err != nil {
		return fmt.Errorf("cannot encode the plot: %w", err)
	}
	if err := os.WriteFile(filepath.Join(docs, "scale.png"), img.Bytes(), 0o600); err != nil {
		return fmt.Errorf("cannot write the plot: %w", err)
	}
	return nil
}

// readRecords reads every recorded run, ordered by settings, then N.
func readRecords(dir string) ([]scaleRecord, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := make([]scaleRecord, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", f, err)
		}
		var r scaleRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("cannot decode %s: %w", f, err)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b scaleRecord) int {
		if c := strings.Compare(a.Settings, b.Settings); c != 0 {
			return c
		}
		return a.N - b.N
	})
	return out, nil
}

// withTable puts table between the markers of doc, or appends it.
func withTable(doc, table string) string {
	block := scaleBegin + "\n" + table + scaleEnd
	i, j := strings.Index(doc, scaleBegin), strings.Index(doc, scaleEnd)
	if i < 0 || j < i {
		return strings.TrimRight(doc, "\n") + "\n\n" + block + "\n"
	}
	return doc[:i] + block + doc[j+len(scaleEnd):]
}

// scaleTable is the markdown of every run: one row each, then the busiest
// requests of each steady state.
func scaleTable(recs []scaleRecord) string {
	var b strings.Builder
	b.WriteString("| settings | N | claims Ready | Gateways served | steady API req/s (baseline) | CPU % of a core: Crossplane / provider / function (sum) | RSS MiB: Crossplane / provider / function | function calls/s | route change p50 / max | window | load average (1 5 15 min) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---|---|---:|---|---:|---|\n")
	for _, r := range recs {
		s := r.Steady
		fmt.Fprintf(&b, "| %s | %d | %.0f s | %.0f s | %.1f (%.1f) | %.1f / %.1f / %.1f (%.1f) | %.0f / %.0f / %.0f | %.2f | %.1f s / %.1f s | %.0f s | %s |\n",
			r.Settings, r.N, r.ConvergeTenants, r.ConvergeGateways, s.APIPerSecond, r.Baseline.APIPerSecond,
			s.CPU["crossplane"], s.CPU["provider-kubernetes"], s.CPU["function"], s.cpuTotal(),
			s.RSSMiB["crossplane"], s.RSSMiB["provider-kubernetes"], s.RSSMiB["function"],
			s.CallsPerSecond, r.RouteP50, r.RouteMax, r.Window, s.Load)
	}
	b.WriteString("\nBusiest API requests in the steady state (requests per second, all clients):\n\n")
	b.WriteString("| settings | N | periods | busiest requests |\n|---|---:|---|---|\n")
	for _, r := range recs {
		periods := make([]string, 0, len(r.Periods))
		for k, v := range r.Periods {
			periods = append(periods, k+"="+v)
		}
		slices.Sort(periods)
		top := make([]string, 0, len(r.Steady.Top))
		for _, t := range r.Steady.Top[:min(6, len(r.Steady.Top))] {
			top = append(top, fmt.Sprintf("%s %.2f", t.What, t.PerSecond))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", r.Settings, r.N, strings.Join(periods, " "), strings.Join(top, ", "))
	}
	return b.String()
}

// Plot geometry: three panels side by side.
const (
	panelW, panelH = 380, 280
	marginL        = 48
	marginB        = 28
	marginT        = 14
	marginR        = 14
)

// settingsColor is each settings' line colour (docs/benchmarks.md's legend).
func settingsColor(s string) color.RGBA {
	switch s {
	case "harness":
		return color.RGBA{R: 200, G: 40, B: 40, A: 255}
	case "quiet":
		return color.RGBA{R: 30, G: 90, B: 200, A: 255}
	default:
		return color.RGBA{R: 120, G: 120, B: 120, A: 255}
	}
}

// scalePlot draws, against N, the steady state's API requests per second
// (left; N=0 is the baseline), the three components' CPU in percent of a
// core (middle), and the seconds until every Gateway was served (right),
// one line per settings.
func scalePlot(recs []scaleRecord) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 3*panelW, panelH))
	fill(img, img.Bounds(), color.RGBA{R: 255, G: 255, B: 255, A: 255})
	metrics := []struct {
		steady func(scaleRecord) float64
		base   func(scaleRecord) (float64, bool)
	}{
		{func(r scaleRecord) float64 { return r.Steady.APIPerSecond }, func(r scaleRecord) (float64, bool) { return r.Baseline.APIPerSecond, true }},
		{func(r scaleRecord) float64 { return r.Steady.cpuTotal() }, func(r scaleRecord) (float64, bool) { return r.Baseline.cpuTotal(), true }},
		{func(r scaleRecord) float64 { return math.Max(r.ConvergeTenants, r.ConvergeGateways) }, func(scaleRecord) (float64, bool) { return 0, false }},
	}
	maxN := 1
	for _, r := range recs {
		maxN = max(maxN, r.N)
	}
	for p, m := range metrics {
		area := image.Rect(p*panelW+marginL, marginT, (p+1)*panelW-marginR, panelH-marginB)
		top := 1.0
		for _, r := range recs {
			top = math.Max(top, m.steady(r))
		}
		top = niceCeil(top)
		axes(img, area, float64(maxN), top)
		bySettings := map[string][][2]float64{}
		for _, r := range recs {
			if v, ok := m.base(r); ok && len(bySettings[r.Settings]) == 0 {
				bySettings[r.Settings] = append(bySettings[r.Settings], [2]float64{0, v})
			}
			bySettings[r.Settings] = append(bySettings[r.Settings], [2]float64{float64(r.N), m.steady(r)})
		}
		names := make([]string, 0, len(bySettings))
		for s := range bySettings {
			names = append(names, s)
		}
		slices.Sort(names)
		for _, s := range names {
			pts := bySettings[s]
			c := settingsColor(s)
			at := func(pt [2]float64) image.Point {
				return image.Pt(area.Min.X+int(pt[0]/float64(maxN)*float64(area.Dx())), area.Max.Y-int(pt[1]/top*float64(area.Dy())))
			}
			for i, pt := range pts {
				q := at(pt)
				fill(img, image.Rect(q.X-3, q.Y-3, q.X+4, q.Y+4), c)
				if i > 0 {
					line(img, at(pts[i-1]), q, c)
				}
			}
		}
	}
	return img
}

// axes draws the frame of a panel with five ticks on each axis, labelled.
func axes(img *image.RGBA, a image.Rectangle, xMax, yMax float64) {
	black := color.RGBA{A: 255}
	grey := color.RGBA{R: 225, G: 225, B: 225, A: 255}
	for i := 0; i <= 4; i++ {
		y := a.Max.Y - i*a.Dy()/4
		fill(img, image.Rect(a.Min.X, y, a.Max.X, y+1), grey)
		label(img, a.Min.X-4, y-5, yMax*float64(i)/4, true)
		x := a.Min.X + i*a.Dx()/4
		fill(img, image.Rect(x, a.Min.Y, x+1, a.Max.Y), grey)
		label(img, x, a.Max.Y+6, xMax*float64(i)/4, false)
	}
	fill(img, image.Rect(a.Min.X, a.Max.Y, a.Max.X, a.Max.Y+1), black)
	fill(img, image.Rect(a.Min.X, a.Min.Y, a.Min.X+1, a.Max.Y), black)
}

// niceCeil rounds up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

// line draws a two-pixel line from a to b (Bresenham).
func line(img *image.RGBA, a, b image.Point, c color.RGBA) {
	dx, dy := abs(b.X-a.X), -abs(b.Y-a.Y)
	sx, sy := sign(b.X-a.X), sign(b.Y-a.Y)
	e := dx + dy
	for {
		fill(img, image.Rect(a.X, a.Y, a.X+2, a.Y+2), c)
		if a == b {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e, a.X = e+dy, a.X+sx
		} else {
			e, a.Y = e+dx, a.Y+sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	default:
		return 0
	}
}

// digits is a 3x5 pixel font of the characters tick labels use.
var digits = map[rune][5]string{
	'0': {"111", "101", "101", "101", "111"},
	'1': {"010", "110", "010", "010", "111"},
	'2': {"111", "001", "111", "100", "111"},
	'3': {"111", "001", "111", "001", "111"},
	'4': {"101", "101", "111", "001", "001"},
	'5': {"111", "100", "111", "001", "111"},
	'6': {"111", "100", "111", "101", "111"},
	'7': {"111", "001", "001", "001", "001"},
	'8': {"111", "101", "111", "101", "111"},
	'9': {"111", "101", "111", "001", "111"},
	'.': {"000", "000", "000", "000", "010"},
}

// label writes v at (x, y) twice the font's size: right-aligned to x when
// right, else centred on x.
func label(img *image.RGBA, x, y int, v float64, right bool) {
	s := fmt.Sprintf("%.0f", v)
	if v != math.Trunc(v) {
		s = fmt.Sprintf("%.1f", v)
	}
	const scale, advance = 2, 8
	w := len(s) * advance
	if right {
		x -= w
	} else {
		x -= w / 2
	}
	for i, r := range s {
		g := digits[r]
		for row, bits := range g {
			for col, bit := range bits {
				if bit == '1' {
					px, py := x+i*advance+col*scale, y+row*scale
					fill(img, image.Rect(px, py, px+scale, py+scale), color.RGBA{A: 255})
				}
			}
		}
	}
}
