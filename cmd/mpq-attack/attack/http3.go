package attack

import (
	"bytes"
	"reflect"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go/quicvarint"
)

// grantUniStreams grants the server n unidirectional streams in params,
// where the protocol version has them (wire.Params.MaxUniStreams, version
// 3): the server's HTTP/3 opens its control stream on one. It is set
// through reflection so that this package still builds against trees of
// earlier versions, whose Params lack the field.
func grantUniStreams(params any, n uint64) {
	v := reflect.ValueOf(params).Elem()
	if f := v.FieldByName("MaxUniStreams"); f.IsValid() && f.CanSet() && f.Kind() == reflect.Uint64 {
		f.SetUint(n)
	}
}

// h3Get is an HTTP/3 request for /name as stream data: one HEADERS frame
// (RFC 9114 §7.2.2) whose field section is QPACK-encoded with no dynamic
// table (RFC 9204).
func h3Get(name string) []byte {
	var fields bytes.Buffer
	enc := qpack.NewEncoder(&fields)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "localhost"}, {":path", "/" + name}} {
		enc.WriteField(qpack.HeaderField{Name: f[0], Value: f[1]})
	}
	b := quicvarint.Append(nil, 0x01) // HEADERS
	b = quicvarint.Append(b, uint64(fields.Len()))
	return append(b, fields.Bytes()...)
}
