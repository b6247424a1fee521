package envoy

import (
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// XDS is the part of the Envoy configuration Envoy Gateway would send that
// the tests judge: listeners with their filter chains, route tables and
// where each cluster sends traffic.
type XDS struct {
	Listeners    []Listener
	RouteConfigs []RouteConfig
	// Endpoints maps a cluster to the addresses it sends to ("ip:port").
	Endpoints map[string][]string
}

// A Listener is one Envoy listener: one port of the Gateway.
type Listener struct {
	Name string
	// Port is the port Envoy binds, which is not the Gateway's: Envoy
	// Gateway moves privileged ports up by 10000 (see ProxyPort).
	Port         uint32
	FilterChains []FilterChain
}

// A FilterChain is what Envoy does with a connection it picked by SNI.
type FilterChain struct {
	Name string
	// ServerNames are the SNI names that select the chain; none for the
	// chain of a plain HTTP port.
	ServerNames []string `json:",omitempty"`
	// Default marks the listener's default filter chain.
	Default bool `json:",omitempty"`
	// Secrets are the certificates presented (SDS secret names,
	// "<namespace>/<name>"): TLS terminates here.
	Secrets []string `json:",omitempty"`
	// RouteConfig names the route table of an HTTP chain.
	RouteConfig string `json:",omitempty"`
	// Clusters are where a TCP proxy chain (TLS passthrough) sends
	// connections.
	Clusters []string `json:",omitempty"`
}

// A RouteConfig is a route table: virtual hosts chosen by Host header.
type RouteConfig struct {
	Name         string
	VirtualHosts []VirtualHost
}

// A VirtualHost is the routes for its domains.
type VirtualHost struct {
	Name    string
	Domains []string
	Routes  []Route
}

// A Route is one Envoy route: a match and what it does.
type Route struct {
	Name string
	// Match is "prefix:<p>", "path:<p>", "path-separated-prefix:<p>" or
	// "regex:<re>"; Headers tells it also matches on request headers.
	Match   string
	Headers bool `json:",omitempty"`
	// Clusters are where it forwards; Redirect and DirectResponse are set
	// instead when it answers by itself.
	Clusters       []string  `json:",omitempty"`
	Redirect       *Redirect `json:",omitempty"`
	DirectResponse uint32    `json:",omitempty"`
}

// A Redirect is a route's redirect answer; empty fields keep the request's.
type Redirect struct {
	Scheme string `json:",omitempty"`
	Host   string `json:",omitempty"`
	Port   uint32 `json:",omitempty"`
	Path   string `json:",omitempty"`
	Code   int
}

// ProxyPort is the port Envoy binds for a Gateway listener port: Envoy
// Gateway runs Envoy unprivileged and adds 10000 to ports below 1024.
func ProxyPort(gatewayPort int32) uint32 {
	if gatewayPort < 1024 {
		return uint32(gatewayPort) + 10000 //nolint:gosec // Checked: 0 <= port < 1024.
	}
	return uint32(gatewayPort)
}

// redirectCodes maps Envoy's RedirectResponseCode names to HTTP status
// codes; protobuf JSON leaves out the default, MOVED_PERMANENTLY.
var redirectCodes = map[string]int{
	"":                   301,
	"MOVED_PERMANENTLY":  301,
	"FOUND":              302,
	"SEE_OTHER":          303,
	"TEMPORARY_REDIRECT": 307,
	"PERMANENT_REDIRECT": 308,
}

// The xDS JSON the translator prints: an Envoy admin config dump, in
// protobuf JSON. Only the fields judged are decoded.
type (
	configDump struct {
		Configs []json.RawMessage `json:"configs"`
	}
	typedDump struct {
		Type             string `json:"@type"`
		DynamicListeners []struct {
			ActiveState struct {
				Listener xdsListener `json:"listener"`
			} `json:"activeState"`
		} `json:"dynamicListeners"`
		DynamicRouteConfigs []struct {
			RouteConfig xdsRouteConfig `json:"routeConfig"`
		} `json:"dynamicRouteConfigs"`
		DynamicEndpointConfigs []struct {
			EndpointConfig struct {
				ClusterName string `json:"clusterName"`
				Endpoints   []struct {
					LBEndpoints []struct {
						Endpoint struct {
							Address xdsAddress `json:"address"`
						} `json:"endpoint"`
					} `json:"lbEndpoints"`
				} `json:"endpoints"`
			} `json:"endpointConfig"`
		} `json:"dynamicEndpointConfigs"`
	}
	xdsAddress struct {
		SocketAddress struct {
			Address   string `json:"address"`
			PortValue uint32 `json:"portValue"`
		} `json:"socketAddress"`
	}
	xdsListener struct {
		Name               string           `json:"name"`
		Address            xdsAddress       `json:"address"`
		FilterChains       []xdsFilterChain `json:"filterChains"`
		DefaultFilterChain *xdsFilterChain  `json:"defaultFilterChain"`
	}
	xdsFilterChain struct {
		Name             string `json:"name"`
		FilterChainMatch struct {
			ServerNames []string `json:"serverNames"`
		} `json:"filterChainMatch"`
		Filters []struct {
			TypedConfig struct {
				RDS struct {
					RouteConfigName string `json:"routeConfigName"`
				} `json:"rds"`
				RouteConfig      *xdsRouteConfig      `json:"routeConfig"`
				Cluster          string               `json:"cluster"`
				WeightedClusters *xdsWeightedClusters `json:"weightedClusters"`
			} `json:"typedConfig"`
		} `json:"filters"`
		TransportSocket struct {
			TypedConfig struct {
				CommonTLSContext struct {
					SDS []struct {
						Name string `json:"name"`
					} `json:"tlsCertificateSdsSecretConfigs"`
				} `json:"commonTlsContext"`
			} `json:"typedConfig"`
		} `json:"transportSocket"`
	}
	xdsWeightedClusters struct {
		Clusters []struct {
			Name string `json:"name"`
		} `json:"clusters"`
	}
	xdsRouteConfig struct {
		Name         string `json:"name"`
		VirtualHosts []struct {
			Name    string     `json:"name"`
			Domains []string   `json:"domains"`
			Routes  []xdsRoute `json:"routes"`
		} `json:"virtualHosts"`
	}
	xdsRoute struct {
		Name  string `json:"name"`
		Match struct {
			Prefix              *string `json:"prefix"`
			Path                *string `json:"path"`
			PathSeparatedPrefix *string `json:"pathSeparatedPrefix"`
			SafeRegex           *struct {
				Regex string `json:"regex"`
			} `json:"safeRegex"`
			Headers []json.RawMessage `json:"headers"`
		} `json:"match"`
		Route *struct {
			Cluster          string               `json:"cluster"`
			WeightedClusters *xdsWeightedClusters `json:"weightedClusters"`
		} `json:"route"`
		Redirect *struct {
			SchemeRedirect string `json:"schemeRedirect"`
			HTTPSRedirect  bool   `json:"httpsRedirect"`
			HostRedirect   string `json:"hostRedirect"`
			PortRedirect   uint32 `json:"portRedirect"`
			PathRedirect   string `json:"pathRedirect"`
			ResponseCode   string `json:"responseCode"`
		} `json:"redirect"`
		DirectResponse *struct {
			Status uint32 `json:"status"`
		} `json:"directResponse"`
	}
)

// parseXDS decodes one Gateway's config dump.
func parseXDS(raw []byte) (XDS, error) {
	var dump configDump
	if err := json.Unmarshal(raw, &dump); err != nil {
		return XDS{}, fmt.Errorf("cannot decode the xDS config dump: %w", err)
	}
	x := XDS{Endpoints: map[string][]string{}}
	for _, c := range dump.Configs {
		var d typedDump
		if err := json.Unmarshal(c, &d); err != nil {
			return XDS{}, fmt.Errorf("cannot decode an xDS config: %w", err)
		}
		for _, l := range d.DynamicListeners {
			x.addListener(l.ActiveState.Listener)
		}
		for _, r := range d.DynamicRouteConfigs {
			x.RouteConfigs = append(x.RouteConfigs, r.RouteConfig.convert())
		}
		for _, e := range d.DynamicEndpointConfigs {
			for _, ep := range e.EndpointConfig.Endpoints {
				for _, lb := range ep.LBEndpoints {
					a := lb.Endpoint.Address.SocketAddress
					x.Endpoints[e.EndpointConfig.ClusterName] = append(x.Endpoints[e.EndpointConfig.ClusterName],
						net.JoinHostPort(a.Address, strconv.FormatUint(uint64(a.PortValue), 10)))
				}
			}
		}
	}
	x.sort()
	return x, nil
}

func (x *XDS) addListener(l xdsListener) {
	out := Listener{Name: l.Name, Port: l.Address.SocketAddress.PortValue}
	add := func(fc xdsFilterChain, def bool) {
		c := FilterChain{Name: fc.Name, ServerNames: fc.FilterChainMatch.ServerNames, Default: def}
		for _, s := range fc.TransportSocket.TypedConfig.CommonTLSContext.SDS {
			c.Secrets = append(c.Secrets, s.Name)
		}
		for _, f := range fc.Filters {
			tc := f.TypedConfig
			switch {
			case tc.RDS.RouteConfigName != "":
				c.RouteConfig = tc.RDS.RouteConfigName
			case tc.RouteConfig != nil:
				// An inline table is judged like one sent by RDS.
				c.RouteConfig = tc.RouteConfig.Name
				x.RouteConfigs = append(x.RouteConfigs, tc.RouteConfig.convert())
			}
			c.Clusters = append(c.Clusters, clusters(tc.Cluster, tc.WeightedClusters)...)
		}
		out.FilterChains = append(out.FilterChains, c)
	}
	for _, fc := range l.FilterChains {
		add(fc, false)
	}
	if l.DefaultFilterChain != nil {
		add(*l.DefaultFilterChain, true)
	}
	x.Listeners = append(x.Listeners, out)
}

func clusters(single string, weighted *xdsWeightedClusters) []string {
	var out []string
	if single != "" {
		out = append(out, single)
	}
	if weighted != nil {
		for _, c := range weighted.Clusters {
			out = append(out, c.Name)
		}
	}
	return out
}

func (rc xdsRouteConfig) convert() RouteConfig {
	out := RouteConfig{Name: rc.Name}
	for _, vh := range rc.VirtualHosts {
		v := VirtualHost{Name: vh.Name, Domains: vh.Domains}
		for _, r := range vh.Routes {
			v.Routes = append(v.Routes, r.convert())
		}
		out.VirtualHosts = append(out.VirtualHosts, v)
	}
	return out
}

func (r xdsRoute) convert() Route {
	out := Route{Name: r.Name, Headers: len(r.Match.Headers) > 0}
	m := r.Match
	switch {
	case m.Prefix != nil:
		out.Match = "prefix:" + *m.Prefix
	case m.Path != nil:
		out.Match = "path:" + *m.Path
	case m.PathSeparatedPrefix != nil:
		out.Match = "path-separated-prefix:" + *m.PathSeparatedPrefix
	case m.SafeRegex != nil:
		out.Match = "regex:" + m.SafeRegex.Regex
	}
	if r.Route != nil {
		out.Clusters = clusters(r.Route.Cluster, r.Route.WeightedClusters)
	}
	if rd := r.Redirect; rd != nil {
		code, ok := redirectCodes[rd.ResponseCode]
		if !ok {
			code = -1
		}
		out.Redirect = &Redirect{Scheme: rd.SchemeRedirect, Host: rd.HostRedirect, Port: rd.PortRedirect, Path: rd.PathRedirect, Code: code}
		if rd.HTTPSRedirect {
			out.Redirect.Scheme = "https"
		}
	}
	if r.DirectResponse != nil {
		out.DirectResponse = r.DirectResponse.Status
	}
	return out
}

func (x *XDS) sort() {
	sort.SliceStable(x.Listeners, func(i, j int) bool { return x.Listeners[i].Name < x.Listeners[j].Name })
	sort.SliceStable(x.RouteConfigs, func(i, j int) bool { return x.RouteConfigs[i].Name < x.RouteConfigs[j].Name })
	for k := range x.Endpoints {
		slices.Sort(x.Endpoints[k])
		x.Endpoints[k] = slices.Compact(x.Endpoints[k])
	}
}

// merge adds what another translator run produced. Listeners, filter
// chains, route tables, virtual hosts and routes are matched by name; what
// one run has and the other lacks is added, and a route another run already
// has is kept once. Routes of different runs land after each other, not in
// Envoy Gateway's precedence order.
func (x *XDS) merge(o XDS) {
	for _, l := range o.Listeners {
		i := slices.IndexFunc(x.Listeners, func(m Listener) bool { return m.Name == l.Name })
		if i < 0 {
			x.Listeners = append(x.Listeners, l)
			continue
		}
		for _, c := range l.FilterChains {
			if !slices.ContainsFunc(x.Listeners[i].FilterChains, func(m FilterChain) bool { return m.Name == c.Name && m.Default == c.Default }) {
				x.Listeners[i].FilterChains = append(x.Listeners[i].FilterChains, c)
			}
		}
	}
	for _, rc := range o.RouteConfigs {
		i := slices.IndexFunc(x.RouteConfigs, func(m RouteConfig) bool { return m.Name == rc.Name })
		if i < 0 {
			x.RouteConfigs = append(x.RouteConfigs, rc)
			continue
		}
		x.RouteConfigs[i].mergeHosts(rc.VirtualHosts)
	}
	if x.Endpoints == nil {
		x.Endpoints = map[string][]string{}
	}
	for k, v := range o.Endpoints {
		x.Endpoints[k] = append(x.Endpoints[k], v...)
	}
	x.sort()
}

func (rc *RouteConfig) mergeHosts(hosts []VirtualHost) {
	for _, vh := range hosts {
		i := slices.IndexFunc(rc.VirtualHosts, func(m VirtualHost) bool { return m.Name == vh.Name })
		if i < 0 {
			rc.VirtualHosts = append(rc.VirtualHosts, vh)
			continue
		}
		have := &rc.VirtualHosts[i]
		for _, d := range vh.Domains {
			if !slices.Contains(have.Domains, d) {
				have.Domains = append(have.Domains, d)
			}
		}
		for _, r := range vh.Routes {
			if !slices.ContainsFunc(have.Routes, func(m Route) bool { return m.Name == r.Name }) {
				have.Routes = append(have.Routes, r)
			}
		}
	}
}

// Listener returns the Envoy listener bound for a Gateway port.
func (x XDS) Listener(gatewayPort int32) (Listener, bool) {
	for _, l := range x.Listeners {
		if l.Port == ProxyPort(gatewayPort) {
			return l, true
		}
	}
	return Listener{}, false
}

// RouteConfig returns a route table by name.
func (x XDS) RouteConfig(name string) (RouteConfig, bool) {
	for _, rc := range x.RouteConfigs {
		if rc.Name == name {
			return rc, true
		}
	}
	return RouteConfig{}, false
}

// A Served is what a client reaching a Gateway port for a host gets: the
// filter chain Envoy picks by SNI and, for HTTP, the virtual host it picks
// by Host header (nil when no virtual host matches: a 404).
type Served struct {
	Listener    string
	FilterChain FilterChain
	VirtualHost *VirtualHost
}

// Serve picks, the way Envoy does, the filter chain a client connecting to
// gatewayPort with SNI host gets, then the virtual host of its route table
// for Host: host. A plain HTTP client sends no SNI and gets the chain that
// names no server (the default chain included).
func (x XDS) Serve(gatewayPort int32, host string) (Served, error) {
	l, ok := x.Listener(gatewayPort)
	if !ok {
		return Served{}, fmt.Errorf("no Envoy listener on port %d (Gateway port %d)", ProxyPort(gatewayPort), gatewayPort)
	}
	fc, ok := pickChain(l.FilterChains, strings.ToLower(host))
	if !ok {
		return Served{}, fmt.Errorf("listener %s has no filter chain for server name %q: the connection is closed", l.Name, host)
	}
	out := Served{Listener: l.Name, FilterChain: fc}
	if fc.RouteConfig == "" {
		return out, nil
	}
	rc, ok := x.RouteConfig(fc.RouteConfig)
	if !ok {
		return Served{}, fmt.Errorf("filter chain %s names route table %s, which was not sent", fc.Name, fc.RouteConfig)
	}
	out.VirtualHost = pickVirtualHost(rc.VirtualHosts, strings.ToLower(host))
	return out, nil
}

// pickChain matches server names as Envoy does: the exact name, then
// wildcards from the longest suffix (a.b.example.org tries *.b.example.org,
// then *.example.org, then *.org), then a chain that names no server.
func pickChain(chains []FilterChain, host string) (FilterChain, bool) {
	candidates := []string{host}
	for rest := host; strings.Contains(rest, "."); {
		_, rest, _ = strings.Cut(rest, ".")
		candidates = append(candidates, "*."+rest)
	}
	for _, name := range candidates {
		for _, c := range chains {
			if slices.Contains(c.ServerNames, name) {
				return c, true
			}
		}
	}
	for _, def := range []bool{false, true} {
		for _, c := range chains {
			if len(c.ServerNames) == 0 && c.Default == def {
				return c, true
			}
		}
	}
	return FilterChain{}, false
}

// pickVirtualHost matches domains as Envoy does: exact, then the longest
// suffix wildcard (*.example.org matches any name below example.org), then
// the longest prefix wildcard (www.*), then *.
func pickVirtualHost(hosts []VirtualHost, host string) *VirtualHost {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	best, bestLen, bestRank := -1, -1, noMatch
	for i, vh := range hosts {
		for _, d := range vh.Domains {
			d = strings.ToLower(d)
			rank := domainRank(d, host)
			if rank < bestRank || (rank == bestRank && rank != noMatch && len(d) > bestLen) {
				best, bestLen, bestRank = i, len(d), rank
			}
		}
	}
	if best < 0 {
		return nil
	}
	return &hosts[best]
}

// Ranks of a domain matching a host, best first.
const (
	exactMatch = iota
	suffixMatch
	prefixMatch
	anyMatch
	noMatch
)

func domainRank(d, host string) int {
	switch {
	case d == host:
		return exactMatch
	case d == "*":
		return anyMatch
	case strings.HasPrefix(d, "*") && strings.HasSuffix(host, d[1:]) && len(host) > len(d)-1:
		return suffixMatch
	case strings.HasSuffix(d, "*") && strings.HasPrefix(host, d[:len(d)-1]) && len(host) > len(d)-1:
		return prefixMatch
	}
	return noMatch
}

// RouteFor is the first route of the virtual host that a request for path
// without any particular header matches, as Envoy tries them in order.
func (vh *VirtualHost) RouteFor(path string) (Route, bool) {
	if vh == nil {
		return Route{}, false
	}
	for _, r := range vh.Routes {
		if !r.Headers && matchesPath(r.Match, path) {
			return r, true
		}
	}
	return Route{}, false
}

func matchesPath(match, path string) bool {
	kind, v, _ := strings.Cut(match, ":")
	switch kind {
	case "prefix":
		return strings.HasPrefix(path, v)
	case "path":
		return path == v
	case "path-separated-prefix":
		return path == v || strings.HasPrefix(path, strings.TrimSuffix(v, "/")+"/")
	case "regex":
		re, err := regexp.Compile("^(?:" + v + ")$")
		return err == nil && re.MatchString(path)
	}
	return false
}
