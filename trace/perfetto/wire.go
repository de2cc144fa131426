package perfetto

import (
	"google.golang.org/protobuf/encoding/protowire"
)

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendStringField(b []byte, num protowire.Number, v string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, v)
}

func appendFixed64Field(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// appendInt32Field encodes an int32 as protobuf does: sign-extended to 64
// bits (so negative values take 10 bytes).
func appendInt32Field(b []byte, num protowire.Number, v int32) []byte {
	return appendVarintField(b, num, uint64(int64(v)))
}
