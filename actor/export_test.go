package actor

// HostOf returns the TransportHost that e hands its transport, so that the
// package's black-box tests can act as a transport.
func HostOf(e *Env) TransportHost { return transportSink{e} }

// MsgCounters returns the number of message counters e holds.
func MsgCounters(e *Env) int { return e.msgs.len() }

// Running returns the names of e's endpoints that have not stopped.
func Running(e *Env) []string { return e.running() }
