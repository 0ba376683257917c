// Package h3 is HTTP/3 (RFC 9114) for this project: an http.Handler server
// and an http.RoundTripper client over a small connection interface, Conn,
// that both the multipath session (FromSession) and a plain quic-go
// connection (FromQUIC) satisfy. quic-go's own http3 package takes only a
// concrete *quic.Conn, so it cannot run over the session; this one can, and
// its tests check it against quic-go's http3 in both directions.
//
// What it implements:
//   - request and response messages with QPACK (github.com/quic-go/qpack,
//     no dynamic table: SETTINGS announce a capacity of 0), trailers,
//     interim (1xx) responses, and message validation (pseudo-header fields,
//     :authority against Host, content-length against the DATA frames)
//     with H3_MESSAGE_ERROR;
//   - control streams with SETTINGS (SETTINGS_MAX_FIELD_SECTION_SIZE) and
//     GOAWAY (Server.Shutdown); unknown frame, stream and setting types are
//     ignored (grease); every protocol error carries its RFC 9114 §8.1 code
//     (ErrCode, *Error);
//   - cancellation in both directions: a request's context on the client
//     resets its stream with H3_REQUEST_CANCELLED, and the server cancels
//     the handler's request context when the client does;
//   - RFC 9218 priorities: the priority header and PRIORITY_UPDATE frames
//     reach a stream that has a SetPriority(urgency uint8, incremental bool)
//     method (ParsePriority reads the field);
//   - one port for every HTTP/3 client: SessionListener serves the plain
//     "h3" connections of a session listener with session.Config.PlainALPNs
//     beside its sessions, and AdvertiseMultipath tells plain clients by
//     Alt-Svc; a client's Dialer offers both ALPNs in one handshake and
//     falls back to plain HTTP/3 on that connection when the server picks
//     "h3" (resp.TLS.NegotiatedProtocol says which ran), takes ServerName
//     from the URL's host, reports each path (OnPath), and migrates a
//     plain connection to another local address when its path fails.
//
// It does not implement server push (it never sends MAX_PUSH_ID, so a
// server's push is an H3_ID_ERROR), extended CONNECT, or HTTP datagrams.
//
// Every buffer, queue and goroutine a peer can cause is bounded by a limit
// it cannot raise (see the Default… constants, Server's and Transport's
// limit fields, and the transports' stream credit), and every wait has a
// timeout or a context.
package h3
