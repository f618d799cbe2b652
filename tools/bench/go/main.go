// keybench: the Go side of the keyservice benchmark (tools/bench/src/keyservice-bench.ts).
//
//	keybench server -listen 127.0.0.1:0 -master-secret FILE -salt FILE
//	    a grpc-go kms.API/GetDataKey server deriving HKDF-SHA256(secret, salt, "key-"+id, length)
//	    with Go's crypto/hkdf; prints "LISTENING <addr>" and serves until killed
//	keybench load -addr HOST:PORT -conns 16 -inflight 1 -warmup 1s -duration 5s
//	    the load generator used for BOTH servers: conns HTTP/2 connections, inflight sequential
//	    callers per connection; prints JSON lines: {"event":"start"} and {"event":"end"} around
//	    the measured window, then the result (calls/s, latency quantiles, errors)
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: keybench server|load [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "server":
		runServer(os.Args[2:])
	case "load":
		runLoad(os.Args[2:])
	default:
		fmt.Fprintln(os.Stderr, "unknown command", os.Args[1])
		os.Exit(2)
	}
}

// rawCodec passes protobuf bytes through; messages are encoded with protowire (two fields each).
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }
