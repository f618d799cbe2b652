/** Interop peers for aTLS: a Go (crypto/tls + grpc-go) client and server following the reference protocol. */
export { buildGoBinary, buildGoPeer, GO_PEER_CACHE, GO_PEER_DIR, haveGo, runGoClient, startGoServer, type GoClientResult } from './go-peer.js';
export { startStubServer, type StubServer } from './stub-server.js';
