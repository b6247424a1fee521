package gateway

// servedListeners maps the names of the listeners being served to their
// hostnames.
type servedListeners map[string]string

// serving are the listeners being served: those of the observed Gateway,
// else, when the Gateway is not observed (the first run, or a re-created
// Gateway), those the XR's status remembers, so that the budgets still keep
// what was served.
func serving(in *Input) servedListeners {
	gw := in.Observed[KeyGateway]
	if gw == nil {
		return in.Previous.Listeners
	}
	s := make(servedListeners, len(gw.ListenerNames))
	for _, n := range gw.ListenerNames {
		s[n] = gw.ListenerHostnames[n]
	}
	return s
}

// hostnames are the hostnames the served listeners have.
func (s servedListeners) hostnames() map[string]bool {
	hosts := make(map[string]bool, len(s))
	for _, h := range s {
		hosts[h] = true
	}
	return hosts
}
