// interop-peer: Go aTLS peers for the Asterism interop tests.
//
//	interop-peer client -addr HOST:PORT [-attest] [-verify] [-method kms|init] [-tls12]
//	    one call through grpc-go; prints one JSON line with the outcome
//	interop-peer server -listen 127.0.0.1:0 [-attest] [-verify-clients]
//	    prints "LISTENING <addr>", serves kms.API/GetDataKey until killed
package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// rawCodec passes protobuf bytes through: messages are hand-encoded with protowire.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: interop-peer client|server [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "client":
		runClient(os.Args[2:])
	case "server":
		runServer(os.Args[2:])
	default:
		fmt.Fprintln(os.Stderr, "unknown command", os.Args[1])
		os.Exit(2)
	}
}

type clientResult struct {
	OK            bool     `json:"ok"`
	Code          string   `json:"code,omitempty"`
	Message       string   `json:"message,omitempty"`
	DataKey       string   `json:"dataKey,omitempty"`
	Messages      []string `json:"messages,omitempty"`
	Token         string   `json:"token,omitempty"`
	KubeletCert   string   `json:"kubeletCert,omitempty"`
	CertRequested bool     `json:"certRequested"`
	AcceptableCAs int32    `json:"acceptableCAs"`
}

func runClient(args []string) {
	fs := flag.NewFlagSet("client", flag.ExitOnError)
	addr := fs.String("addr", "", "server address")
	attest := fs.Bool("attest", false, "attest this client (document in the client certificate)")
	verify := fs.Bool("verify", false, "verify the server's attestation document")
	method := fs.String("method", "kms", "kms (unary GetDataKey), init (server-streaming Init) or join (IssueJoinTicket)")
	csrFile := fs.String("csr", "", "join: DER kubelet CSR file")
	hostKeyFile := fs.String("hostkey", "", "join: SSH host public key (wire format) file")
	diskUUID := fs.String("disk-uuid", "00000000-0000-4000-8000-000000000001", "join: disk UUID")
	tls12 := fs.Bool("tls12", false, "cap the handshake at TLS 1.2")
	_ = fs.Parse(args)

	stats := &clientStats{}
	maxVersion := uint16(0)
	if *tls12 {
		maxVersion = tls.VersionTLS12
	}
	creds := &transportCredentials{attest: *attest, validate: *verify, maxVersion: maxVersion, stats: stats}
	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	res := clientResult{}
	switch *method {
	case "kms":
		req := protowire.AppendTag(nil, 1, protowire.BytesType)
		req = protowire.AppendString(req, "interop")
		req = protowire.AppendTag(req, 2, protowire.VarintType)
		req = protowire.AppendVarint(req, 16)
		var resp []byte
		err = conn.Invoke(ctx, "/kms.API/GetDataKey", &req, &resp, grpc.ForceCodec(rawCodec{}), grpc.WaitForReady(false))
		if err == nil {
			res.DataKey = hex.EncodeToString(field(resp, 1))
		}
	case "init":
		req := protowire.AppendTag(nil, 9, protowire.BytesType)
		req = protowire.AppendString(req, "interop")
		var stream grpc.ClientStream
		stream, err = conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/init.API/Init", grpc.ForceCodec(rawCodec{}))
		if err == nil {
			err = stream.SendMsg(&req)
		}
		if err == nil {
			err = stream.CloseSend()
		}
		for err == nil {
			var msg []byte
			if err = stream.RecvMsg(&msg); err == nil {
				res.Messages = append(res.Messages, hex.EncodeToString(msg))
			}
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
	case "join":
		csr, rerr := os.ReadFile(*csrFile)
		if rerr != nil {
			fmt.Fprintln(os.Stderr, rerr)
			os.Exit(2)
		}
		hostKey, rerr := os.ReadFile(*hostKeyFile)
		if rerr != nil {
			fmt.Fprintln(os.Stderr, rerr)
			os.Exit(2)
		}
		// join.IssueJoinTicketRequest, encoded field by field as the reference's proto defines it.
		req := protowire.AppendTag(nil, 1, protowire.BytesType)
		req = protowire.AppendString(req, *diskUUID)
		req = protowire.AppendTag(req, 2, protowire.BytesType)
		req = protowire.AppendBytes(req, csr)
		req = protowire.AppendTag(req, 4, protowire.BytesType)
		req = protowire.AppendBytes(req, hostKey)
		req = protowire.AppendTag(req, 5, protowire.BytesType)
		req = protowire.AppendString(req, "interop-node")
		var resp []byte
		err = conn.Invoke(ctx, "/join.API/IssueJoinTicket", &req, &resp, grpc.ForceCodec(rawCodec{}), grpc.WaitForReady(false))
		if err == nil {
			res.DataKey = hex.EncodeToString(field(resp, 1))
			res.Token = string(field(resp, 6))
			res.KubeletCert = string(field(resp, 4))
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown method", *method)
		os.Exit(2)
	}
	res.CertRequested = stats.certRequested.Load()
	res.AcceptableCAs = stats.acceptableCAs.Load()
	if err != nil {
		st := status.Convert(err)
		res.Code, res.Message = st.Code().String(), st.Message()
	} else {
		res.OK = true
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
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

func runServer(args []string) {
	fs := flag.NewFlagSet("server", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "listen address")
	attest := fs.Bool("attest", true, "attest this server")
	verifyClients := fs.Bool("verify-clients", false, "require attested clients (reference mutual mode)")
	_ = fs.Parse(args)

	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	creds := &transportCredentials{attest: *attest, validate: *verifyClients}
	srv := grpc.NewServer(grpc.Creds(creds), grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		method, _ := grpc.MethodFromServerStream(stream)
		if method != "/kms.API/GetDataKey" {
			return status.Errorf(12, "unknown method %s", method)
		}
		var req []byte
		if err := stream.RecvMsg(&req); err != nil {
			return err
		}
		// Same stub as the Node tests: sha256(data_key_id)[:16].
		sum := sha256.Sum256(field(req, 1))
		resp := protowire.AppendTag(nil, 1, protowire.BytesType)
		resp = protowire.AppendBytes(resp, sum[:16])
		return stream.SendMsg(&resp)
	}))
	fmt.Printf("LISTENING %s\n", lis.Addr().String())
	if err := srv.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
