package main

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"flag"
	"fmt"
	"net"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// maxKeyLength is the HKDF-SHA256 output limit (255 blocks of 32 bytes).
const maxKeyLength = 255 * 32

type kmsServer struct{ secret, salt []byte }

// getDataKeyRequest is kms.GetDataKeyRequest: data_key_id = 1 (string), length = 2 (uint32).
type getDataKeyRequest struct {
	dataKeyID string
	length    uint64
}

func parseRequest(b []byte) (getDataKeyRequest, error) {
	var req getDataKeyRequest
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return req, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return req, protowire.ParseError(m)
			}
			req.dataKeyID, b = string(v), b[m:]
		case num == 2 && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return req, protowire.ParseError(m)
			}
			req.length, b = v, b[m:]
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return req, protowire.ParseError(m)
			}
			b = b[m:]
		}
	}
	return req, nil
}

func (s *kmsServer) getDataKey(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var raw []byte
	if err := dec(&raw); err != nil {
		return nil, err
	}
	req, err := parseRequest(raw)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if req.length == 0 {
		return nil, status.Error(codes.InvalidArgument, "can't derive key with length zero")
	}
	if req.dataKeyID == "" {
		return nil, status.Error(codes.InvalidArgument, "no data key ID specified")
	}
	if req.length > maxKeyLength {
		return nil, status.Error(codes.InvalidArgument, "key length too large")
	}
	key, err := hkdf.Key(sha256.New, s.secret, s.salt, "key-"+req.dataKeyID, int(req.length))
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	resp := protowire.AppendTag(nil, 1, protowire.BytesType)
	resp = protowire.AppendBytes(resp, key)
	return &resp, nil
}

func runServer(args []string) {
	fs := flag.NewFlagSet("server", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "listen address")
	secretPath := fs.String("master-secret", "", "file with the raw master secret")
	saltPath := fs.String("salt", "", "file with the raw salt")
	_ = fs.Parse(args)

	secret, err := os.ReadFile(*secretPath)
	exitOn(err)
	salt, err := os.ReadFile(*saltPath)
	exitOn(err)
	lis, err := net.Listen("tcp", *listen)
	exitOn(err)
	impl := &kmsServer{secret: secret, salt: salt}
	srv := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}))
	srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "kms.API",
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "GetDataKey", Handler: impl.getDataKey}},
		Metadata:    "kms.proto",
	}, impl)
	fmt.Printf("LISTENING %s\n", lis.Addr().String())
	exitOn(srv.Serve(lis))
}

func exitOn(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
