// Package actor is sparkrpc's local RPC environment: Apache Spark's RpcEnv,
// RpcEndpoint, RpcEndpointRef, Dispatcher and Inbox, built on protoactor-go.
//
// An Env holds named endpoints. Each endpoint is one protoactor actor spawned
// under its name, so its PID is {Address: the env's identity, Id: the name}
// and a Ref to it reads "spark://name@host:port". Messages are protobuf
// messages (proto.Message). The package runs with no network at all; package
// netty plugs a TCP transport in through the Transport interface declared
// here, and MemNetwork is an in-memory transport for tests.
//
// # Usage
//
//	env, err := actor.NewEnv("driver", conf, actor.WithLogger(logger))
//	if err != nil { ... }
//	defer env.Shutdown(ctx)
//
//	ref, err := env.RegisterEndpoint("greeter", &Greeter{})
//	err = ref.Send(wrapperspb.String("hello"))                // one way
//	reply, err := ref.AskSync(ctx, wrapperspb.String("Spark")) // request/reply
//	s, err := actor.AskAs[*wrapperspb.StringValue](ctx, ref, wrapperspb.String("Spark"))
//
// conf is a *Conf (nil for an empty one): Spark's string map of spark.* keys,
// loadable from a properties file (LoadProperties) and from --conf arguments
// (SetFromArg), with getters that parse Spark's time ("120s", "10ms") and size
// ("128m") strings.
//
// # Endpoints
//
// An endpoint is any value with a Receive method (Endpoint; ReceiveFunc
// adapts a function). The other hooks are small optional interfaces, like
// net/http's: Replier (ReceiveAndReply, for asks), Starter (OnStart), Stopper
// (OnStop), ErrorHandler (OnError), ConnectHandler, DisconnectHandler and
// NetworkErrorHandler (network events), Isolated (a dedicated loop), and
// Borrower (large messages from other envs that alias the transport's read
// buffer instead of owning a copy, valid until the handler returns unless it
// calls Context.Retain; see Borrower), and PeerAware (Context.Peer says which
// env each message came from, one-way messages included).
//
// # Lifecycle
//
// An endpoint lives through
//
//	RegisterEndpoint → OnStart → Receive / ReceiveAndReply / network events … → OnStop
//
// RegisterEndpoint queues OnStart as the endpoint's first message and returns
// at once; the endpoint is reachable by name from then on, and not before:
// by the time a message (local, from a peer, or a network event) can find
// it, its mailbox is complete and OnStart is queued ahead of everything
// else. A second endpoint
// under a taken name is a *DuplicateEndpointError ("There is already an
// RpcEndpoint called NAME").
//
// Env.Stop(ref), or Context.Stop from inside the endpoint, stops it the way
// Spark does: the name is released and new messages to it fail with "Could
// not find NAME.", the messages already queued are still handled, and OnStop
// runs last and alone, exactly once however often Stop is called.
// Context.Self returns the endpoint's Ref in OnStart and in every handler, and
// nil in OnStop.
//
// # Shutdown
//
// Env.Shutdown(ctx) stops an env in this order, so that no caller waits on
// a handler:
//
//  1. it stops accepting work: every operation returns ErrEnvStopped from
//     then on, and every endpoint is stopped as Stop does (its queued
//     messages are still handled, then OnStop runs);
//  2. every pending ask made on the env, to a local or a remote endpoint,
//     fails at once with ErrEnvStopped, whatever its timeout (also
//     InfiniteTimeout);
//  3. the transport closes its listener and connections (after writing what
//     was already queued, for at most a couple of seconds and never past
//     ctx), so that peers' asks pending on this env fail at once with
//     ErrConnectionClosed; a blocked handler never keeps a socket open;
//  4. it waits for the endpoints' handlers and OnStop, and the loops, until
//     ctx ends.
//
// When ctx ends first, Shutdown returns a *ShutdownError that wraps ctx's
// cause and names the endpoints still running; they finish in the
// background, and AwaitTermination and Terminated tell when. Env.Close is
// the immediate stop: steps 1 to 3 without waiting, and the messages still
// queued are dropped (counted by Dropped) instead of handled; each endpoint
// still gets OnStop once its running handler, if any, returns.
//
// # Send and ask
//
// Ref.Send is Spark's send: fire and forget. It fails at once, with a typed
// error, for a nil message (ErrNilMessage), a stopped env (ErrEnvStopped) or
// a local endpoint that is not registered (*EndpointNotFoundError).
//
// Ref.Ask is Spark's ask: it returns a *Future that completes exactly once,
// with the reply, with the failure the endpoint sent, with an
// *RpcTimeoutError, with the cause of the ask's cancelled context, or at once
// when the endpoint does not exist or the connection it depends on closes.
// Future.Result waits for it; Future.Wait waits at most until a context
// ends. AskSync is Ask followed by Result; AskAs and ResultAs also check the
// reply's type (a *ReplyTypeError when it is not the one expected).
//
// The endpoint answers in ReceiveAndReply with CallContext.Reply or
// CallContext.SendFailure, now or later and from any goroutine; only the
// first answer counts. SenderAddress tells where the ask came from.
//
// Plain protoactor code can talk to endpoints too: Send, Request and
// RequestFuture on Ref.PID, through Env.System, reach the endpoint, locally
// and, through the transport, on other envs. Env.System creates that
// protoactor actor system on first use; the endpoints do not run on it, so
// an env that never needs it does not carry it. protoactor's Future cannot
// carry an arbitrary error, so for such an ask: an endpoint that does not
// exist, local or remote, fails it with protoactor.ErrDeadLetter (as
// protoactor does for any missing PID); a failure the endpoint or its env
// sends (SendFailure, an error or panic in the handler, ErrEnvStopped)
// arrives as a *messages.RpcFailure result with a nil error, which
// FailureFromProto turns into the error.
//
// # Timeouts and cancellation
//
// Every ask has an RpcTimeout: a duration and the configuration key that set
// it. The default comes from spark.rpc.askTimeout, else spark.network.timeout,
// else 120s (see AskTimeout, and NewRpcTimeout for other keys; the first key
// that is set wins and names the timeout). A timed-out ask fails with an
// *RpcTimeoutError (errors.Is(err, ErrTimeout)) whose text ends with
//
//	. This timeout is controlled by KEY
//
// naming the key exactly once, so that the fix is obvious. A zero or negative
// timeout is refused with ErrInvalidTimeout: given to an ask, by the ask; set
// in the configuration, by NewEnv (a *ConfError naming the key);
// InfiniteTimeout never expires.
// An ask does not create a timer while it is fast: the env arms the timer
// of an ask that is still pending a few milliseconds after it was made, so
// a timeout fires no earlier than its duration and at most a few
// milliseconds later.
//
// Cancelling the context given to Ask fails the ask with the context's
// cause (context.WithCancelCause), which errors.Is finds: Result and Wait
// return at once, Done is closed within a few milliseconds. Lookups
// (SetupEndpointRef) use spark.rpc.lookupTimeout.
//
// # Message loops
//
// Ordinary endpoints share one loop: a pool of
// spark.rpc.netty.dispatcher.numThreads goroutines (default max(2,
// GOMAXPROCS), see WithNumUsableCores). Each endpoint handles one message at
// a time, in the order they were queued, with a happens-before edge between
// consecutive calls, so its state needs no lock (Spark's
// ThreadSafeRpcEndpoint). There is no order across endpoints.
//
// An endpoint handles at most a few hundred messages in one turn on a loop
// goroutine; if more are waiting it then goes to the back of the loop's
// queue, so that every endpoint with mail gets a turn however busy the
// others are.
//
// A handler that blocks holds one goroutine of the shared loop. An endpoint
// that may block declares Isolated: it gets a dedicated loop of its own
// (Spark's IsolatedRpcEndpoint). With a thread count of 1 it stays serial;
// with more, its Receive and ReceiveAndReply run concurrently on that many
// goroutines, in no particular order, while OnStart still runs alone and
// first and OnStop alone and last.
//
// # Errors
//
// An error returned by a hook, or a panic in it (recovered as a *PanicError
// with its stack), goes to OnError, or to the log when the endpoint has no
// OnError; the endpoint keeps running with its state (no protoactor restart).
// An error or panic in ReceiveAndReply also fails the asker with it. A handler
// returns ErrUnsupportedMessage for a message it does not handle; the asker
// then gets an *UnsupportedMessageError ("Unsupported message TYPE from
// ADDR").
//
// Errors are typed: the sentinels (ErrEnvStopped, ErrEndpointNotFound,
// ErrDuplicateEndpoint, ErrUnsupportedMessage, ErrTimeout, ErrConnectionClosed,
// ErrMessageTooLarge, ErrNilMessage, ErrInvalidName, ErrInvalidTimeout,
// ErrNoTransport, and the file server's, see File server) are matched with
// errors.Is, the error types (*EndpointNotFoundError, *RpcTimeoutError,
// *PanicError, *ConfError, *FileError, ...) with errors.As. A failure that
// comes back from another env is a *RemoteError that carries its code, so
// errors.Is still matches the sentinel it stands for, and errors.As finds the
// *EndpointNotFoundError, *UnsupportedMessageError or *MessageTooLargeError a
// local ask would get, made of the name, type, sender or sizes the remote env
// sent (RpcFailure's subject, from, size and limit), when it sent them: like
// the failure's text, they are the remote env's word.
//
// A message that an env accepted for one of its endpoints, but that arrives
// after the endpoint stopped, is dropped and reported: counted by
// Env.Dropped and passed to the function set with WithDropHandler; an ask
// among them fails with "Could not find NAME.". No message disappears
// silently: each one is handled, refused by Send, or reported dropped.
//
// # Transports and remote envs
//
// WithTransport connects an env to others. A transport that listens gives the
// env an address (Env.Address) and an endpoint-verifier, so that other envs
// can look its endpoints up with SetupEndpointRef or SetupEndpointRefByURI
// ("spark://name@host:port"; a missing one is "Cannot find endpoint:
// spark://name@host:port"). A transport in client mode does not listen; its
// endpoints ("spark-client://name") are reachable over the connections the
// env opened. A Ref travels inside a message as Ref.Proto and is turned back
// into a usable Ref with Env.RefFromProto.
//
// Every endpoint is told of connections (OnConnected), disconnections
// (OnDisconnected) and network errors (OnNetworkError); an env's own Shutdown
// does not deliver OnDisconnected to its own endpoints. When a connection
// closes, every ask pending on it fails at once with a *ConnectionClosedError
// ("Connection from ADDR closed"), without waiting for its timeout.
//
// # Writing a transport
//
// A Transport is given its env's TransportHost when the env starts it
// (Transport.Start), and nowhere else: delivery of inbound messages and
// replies (Deliver; LookupReply, which finds an ask only for the peer it
// went to; NoEndpoint, which answers a message for a missing target
// without its payload; and an endpoint's Inbox, which says what types it
// Accepts and which a
// transport may keep per target and post to one message at a time or, with
// PostBatch, many under one lock), network events (Connected,
// Disconnected, NetworkError), messages that could not be sent
// (Undeliverable), the inbound flow-control hook (AfterProcessed) and the
// query that tells a dead connection from an idle one (PendingAsks). None of
// these are methods of Env: what an endpoint writer sees is only the API
// above. A transport's contract (what Send, PeerAddress and Shutdown
// promise) is documented on Transport; MemNetwork is a complete in-memory
// example.
//
// An endpoint may implement Acceptor to say which message types it takes
// from other envs; a transport refuses the others before decoding them. A
// bare *Router takes the types it has handlers for (Router.Handles). AskAs
// binds its ask to the reply type it expects, and a remote reply of another
// type is refused undecoded. Reply-to ids are random. An endpoint that
// decides what a peer may do by who it is implements PeerAware and reads
// Context.Peer, which its transport takes from the connection, not from the
// message.
//
// # File server
//
// An env that listens serves files to other envs, as Spark's
// RpcEnv.fileServer does: FileServer().AddFile(path) and AddJar(path)
// return spark://host:port/files/NAME and .../jars/NAME (the base name,
// escaped), AddDirectory("/dir1", dir) returns spark://host:port/dir1,
// under which the files of dir are .../dir1/RELATIVE/PATH. RemoveFile and
// RemoveJar stop serving a name. Any env, also one in client mode,
// downloads such a URI with OpenChannel, an io.ReadCloser, or FetchFile,
// which writes it into a folder (a temporary file, mode 0600, renamed once
// complete, as Spark's Utils.fetchFile).
//
//	uri, err := driver.FileServer().AddFile("/opt/app/conf/app.properties")
//	...
//	path, err := executor.FetchFile(ctx, uri, workDir)
//
// A download is an exchange of asks with the serving env's file-server
// endpoint (FileServerName, registered by the first Add), over the
// connection the envs' messages use, so it works over every transport and
// spark.authenticate and TLS cover it. The file comes in chunks of
// spark.rpc.fileServer.chunkSize (256k, within spark.rpc.message.maxSize),
// the reply to the open bringing the first; the downloader asks for
// spark.rpc.fileServer.chunksInFlight (4) of them ahead of its reader, each
// ask bounded by spark.files.fetchTimeout (60s). Neither side holds more
// than that many chunks of a download, whatever the file's size.
//
// The server opens the file once per download and reads every chunk from
// that descriptor, after checking that its size and modification time are
// those it had at the open: a file removed or renamed over while it is
// served is served whole as it was, one changed in place fails the reader
// with ErrFileChanged. A file larger than one chunk holds a stream on the
// server until its last chunk is served, the reader closes it, cancels its
// ctx, fails, or disconnects, or no chunk was asked of it for
// spark.rpc.fileServer.streamTimeout (spark.network.timeout). A peer holds
// at most spark.rpc.fileServer.maxStreamsPerPeer (64) streams, the server
// at most spark.rpc.fileServer.maxStreams (1024); past either, a download
// fails with ErrTooManyStreams.
//
// Nothing but what was added is reachable: names are looked up in the
// server's table, and a directory is read through os.Root, so a path with
// "..", an absolute path, or a symbolic link that leads out of the
// directory is refused (ErrPathRefused). A download's failures are
// *FileErrors that name the URI and wrap the sentinel or the cause from
// below (see OpenChannel): ErrFileNotFound, ErrInvalidFileURI,
// ErrPathRefused, ErrTooManyStreams, ErrFileChanged, ErrStreamClosed,
// ErrStreamFailed, ErrFileExists; a connect error, an *RpcTimeoutError, a
// *ConnectionClosedError, ctx's cause. A download that fails mid-stream
// never ends with io.EOF.
//
// # Logging
//
// The env logs through the zerolog logger given with WithLogger, with
// component, env and endpoint fields; without WithLogger it logs nothing.
// protoactor's own slog output is routed into the same logger, its
// informational messages lowered to debug. The package never calls os.Exit.
//
// # Typed handlers
//
// A Router replaces an endpoint's type switches with one function per
// message type: Handle registers a one-way handler (Receive), HandleAsk an
// ask handler whose returned response is the reply and whose error fails
// the asker (ReceiveAndReply).
//
//	r := actor.NewRouter()
//	actor.Handle(r, func(ctx *actor.Context, m *messages.StatusUpdate) error { ... })
//	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.RegisterExecutor) (*messages.BoolReply, error) { ... })
//	ref, err := env.RegisterEndpoint("driver", r)
//
// The Router is an Endpoint and a Replier: register it as it is, or embed it
// in an endpoint type that adds OnStart, OnStop, OnError, network events or
// ThreadCount. A type without a handler of the right kind gets
// ErrUnsupportedMessage, so the asker fails with "Unsupported message TYPE
// from ADDR"; one type may have a one-way and an ask handler. Registering a
// type twice for the same kind panics: it is a programming error. A nil
// response with a nil error fails the asker with ErrNilMessage. Dispatch is
// one map lookup on the message's Go type and allocates nothing. Handlers
// are registered before the endpoint's first message (before
// RegisterEndpoint, or in OnStart). An endpoint that answers an ask later,
// from another goroutine, or that needs a message of any type, implements
// Endpoint and Replier itself.
//
// # Metrics
//
// Every env owns a Prometheus registry (Metrics), served by MetricsHandler:
// messages sent and received by endpoint and type, drops, mailbox depths,
// asks in flight, ask latency and ask failures by cause, and the metrics of
// its transport and of what is built on the env. An env made without
// WithMetricsRegistry also has the Go runtime and process collectors in its
// registry. No metric goes to Prometheus' default registry. A message
// delivered to an endpoint is counted by its mailbox, under the lock its
// sender takes to queue it anyway; a message sent to another env adds to an
// atomic counter. Collectors read the counts when scraped.
package actor
