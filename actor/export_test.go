package actor

// HostOf returns the TransportHost that e hands its transport, so that the
// package's black-box tests can act as a transport.
func HostOf(e *Env) TransportHost { return transportSink{e} }
