package identity

import (
	"errors"
	"net/http"
)

// Middleware authenticates each request before next sees it: a refused
// request is answered here (WriteError); an accepted one goes on with its
// Principal in the context (FromContext) and without its Authorization
// header, so nothing behind the gateway's edge can keep or forward the
// client's token.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Authenticate(r)
		if err != nil {
			a.WriteError(w, err)
			return
		}
		r = r.Clone(WithPrincipal(r.Context(), p))
		r.Header.Del("Authorization")
		next.ServeHTTP(w, r)
	})
}

// RequireScopes returns middleware, for use behind Middleware, that
// refuses a request whose Principal lacks any of scopes with 403
// insufficient_scope naming the missing ones (RFC 6750 §3.1), so a client
// can ask for them (step-up authorization).
func (a *Authenticator) RequireScopes(scopes ...string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := FromContext(r.Context())
			if !ok {
				a.WriteError(w, errNoToken())
				return
			}
			if missing := p.MissingScopes(scopes...); len(missing) > 0 {
				a.WriteError(w, InsufficientScope(missing...))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// WriteError answers w with err as RFC 6750 says: the status, a
// WWW-Authenticate challenge naming the resource metadata (on a 401 or
// 403), and a small JSON body. An err that is not an *Error is answered
// as a 401 without detail.
func (a *Authenticator) WriteError(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = errToken("the token could not be checked", nil)
	}
	writeError(w, e, a.metaURL)
}
