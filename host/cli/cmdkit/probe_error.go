package cmdkit

import "github.com/hermes-agent/hermes/host/failure"

// ProbeError is a failed probe: the registry's reason, with the sdk code
// and the 401/403 challenge when the failure had them.
type ProbeError struct {
	Msg, Code, Challenge string
	// Status is the HTTP status of the failure, 0 when it had none.
	Status int
}

func (e *ProbeError) Error() string { return e.Msg }

// FailureCode is the failure code of the sdk code (failure.CodeOther when
// the failure had none).
func (e *ProbeError) FailureCode() failure.Code {
	if e.Code == "" {
		return failure.CodeOther
	}
	return failure.Code(e.Code)
}
