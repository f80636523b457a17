package webui

import "time"

// WithBeforeSend runs hook in every page handler after the page is
// rendered from its snapshot and before it is written: a test holds a
// render there to show that nothing else waits for it.
func WithBeforeSend(hook func()) Option {
	return optionFunc(func(o *options) { o.beforeSend = hook })
}

// WithClock sets the clock that spaces the log lines about refused
// credentials.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(o *options) { o.now = now })
}

// BoundFlow bounds f's endpoints and peers as the flow page does.
func BoundFlow(f Flow) Flow {
	f.Endpoints, f.Peers = boundEndpoints(f.Endpoints), boundPeers(f.Peers)
	return f
}
