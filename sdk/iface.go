package sdk

import (
	"context"

	"github.com/mark3labs/mcp-go/client/transport"
)

type transportInterface = transport.Interface

// Watched is implemented by transports that can tell when their connection
// ended on its own (the server process exited, the stream broke). The SDK
// then tells the host at once, with Err as the reason, instead of waiting for
// the next call to fail.
type Watched interface {
	Done() <-chan struct{}
	Err() error
}

// Warner is implemented by transports that notice problems worth telling the
// user about without failing (e.g. a server writing non-JSON to stdout). The
// SDK forwards each warning to the host log and keeps the last one for the
// host's error messages.
type Warner interface {
	SetWarningHandler(func(*Error))
}

// AsyncSender is an optional fast path for transports that match responses
// to requests on a reader of their own (stdio does). The SDK calls
// SendRequestAsync on its frame reader instead of a goroutine per request;
// the transport must not block for long before returning (writing the
// request is fine) and must call done exactly once: with the response, with
// an error, or with ctx.Err() when ctx ends first. done may run on the
// transport's reader.
type AsyncSender interface {
	SendRequestAsync(ctx context.Context, req transport.JSONRPCRequest, done func(*transport.JSONRPCResponse, error))
}
