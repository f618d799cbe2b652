package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protowire"
)

type loadResult struct {
	Event       string  `json:"event"`
	Calls       int64   `json:"calls"`
	Errors      int64   `json:"errors"`
	CallsPerSec float64 `json:"callsPerSec"`
	P50Ms       float64 `json:"p50Ms"`
	P99Ms       float64 `json:"p99Ms"`
	FirstError  string  `json:"firstError,omitempty"`
	Mismatch    bool    `json:"mismatch"`
}

func runLoad(args []string) {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	addr := fs.String("addr", "", "server address")
	conns := fs.Int("conns", 16, "HTTP/2 connections (one client each)")
	inflight := fs.Int("inflight", 1, "sequential callers per connection")
	warmup := fs.Duration("warmup", time.Second, "calls before the measured window are not counted")
	duration := fs.Duration("duration", 5*time.Second, "measured window")
	keyID := fs.String("id", "00000000-0000-0000-0000-000000000000", "data key id")
	length := fs.Uint64("length", 32, "key length")
	expect := fs.String("expect", "", "hex of the expected key (checked on every call)")
	_ = fs.Parse(args)

	req := protowire.AppendTag(nil, 1, protowire.BytesType)
	req = protowire.AppendString(req, *keyID)
	req = protowire.AppendTag(req, 2, protowire.VarintType)
	req = protowire.AppendVarint(req, *length)
	want, err := hex.DecodeString(*expect)
	exitOn(err)

	clients := make([]*grpc.ClientConn, *conns)
	for i := range clients {
		cc, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
		exitOn(err)
		defer cc.Close()
		clients[i] = cc
	}

	var measuring atomic.Bool
	var stop atomic.Bool
	var errCount atomic.Int64
	var mismatch atomic.Bool
	var firstErr atomic.Value
	samples := make([][]float64, *conns**inflight)
	var wg sync.WaitGroup
	for w := range samples {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			cc := clients[w%*conns]
			for !stop.Load() {
				var resp []byte
				in := req
				start := time.Now()
				err := cc.Invoke(context.Background(), "/kms.API/GetDataKey", &in, &resp)
				elapsed := time.Since(start)
				if !measuring.Load() {
					continue
				}
				if err != nil {
					errCount.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				if len(want) > 0 && hex.EncodeToString(field(resp, 1)) != *expect {
					mismatch.Store(true)
				}
				samples[w] = append(samples[w], float64(elapsed.Microseconds())/1000)
			}
		}(w)
	}
	time.Sleep(*warmup)
	measuring.Store(true)
	started := time.Now()
	fmt.Println(`{"event":"start"}`)
	time.Sleep(*duration)
	measuring.Store(false)
	window := time.Since(started)
	fmt.Println(`{"event":"end"}`)
	stop.Store(true)
	wg.Wait()

	var all []float64
	for _, s := range samples {
		all = append(all, s...)
	}
	sort.Float64s(all)
	res := loadResult{Event: "result", Calls: int64(len(all)), Errors: errCount.Load(), Mismatch: mismatch.Load()}
	res.CallsPerSec = float64(len(all)) / window.Seconds()
	res.P50Ms = quantile(all, 0.5)
	res.P99Ms = quantile(all, 0.99)
	if e, ok := firstErr.Load().(string); ok {
		res.FirstError = e
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
}

func quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(p*float64(len(sorted)-1))]
}

// field returns the first length-delimited field num of a protobuf message.
func field(msg []byte, num protowire.Number) []byte {
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return nil
		}
		msg = msg[l:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(msg)
			if m < 0 {
				return nil
			}
			if n == num {
				return v
			}
			msg = msg[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(n, typ, msg)
		if m < 0 {
			return nil
		}
		msg = msg[m:]
	}
	return nil
}
