package perfettopb

//go:generate protoc -I=../../.. --go_out=../../.. --go_opt=paths=source_relative trace/perfetto/perfettopb/perfetto.proto
