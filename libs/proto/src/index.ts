/**
 * Generated gRPC/protobuf bindings (ts-proto, grpc-js services), one namespace per proto package.
 * The method paths match the reference: /init.API/Init, /join.API/IssueJoinTicket,
 * /join.API/IssueRejoinTicket, /kms.API/GetDataKey, /recoverproto.API/Recover and
 * /verify.API/GetAttestation; /upgradeagent.API/* is Asterism's own (docs/protocol/upgrade.md).
 */
export * as components from './gen/components/components.js';
export * as init from './gen/init/init.js';
export * as join from './gen/join/join.js';
export * as kms from './gen/kms/keyservice.js';
export * as recoverproto from './gen/recover/recover.js';
export * as verify from './gen/verify/verify.js';
export * as upgradeagent from './gen/upgrade/upgrade.js';
export { upgradeSigningPayload } from './upgrade-signing.js';
