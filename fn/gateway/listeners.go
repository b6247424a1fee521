package gateway

import (
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// listeners returns the Gateway's listeners in the order of SPEC §5.2.
func listeners(in *Input) []gwapiv1.Listener {
	return []gwapiv1.Listener{httpListener(in)}
}

// httpListener is listener #1: port 80, any hostname, SEL-HTTP. It carries the
// redirect route and the ACME HTTP-01 challenges.
func httpListener(in *Input) gwapiv1.Listener {
	return gwapiv1.Listener{
		Name:          ListenerHTTP,
		Port:          80,
		Protocol:      gwapiv1.HTTPProtocolType,
		AllowedRoutes: selectorHTTP(in),
	}
}
