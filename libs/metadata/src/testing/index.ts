/** Local fakes of the cloud metadata services and a moto launcher, for this lib's and the apps' tests. */
export { closedLoopbackPort, json, LoopbackServer, type FakeResponse, type SeenRequest } from './loopback-server.js';
export { awsImdsFake, type FakeEc2Instance } from './aws-imds-fake.js';
export { MotoServer, motoServerBinary, motoUnavailable } from './moto.js';
export { seedMotoCluster, type SeededAwsCluster } from './moto-seed.js';
export { azureArmFake, azureImdsFake, azureVmId, type FakeAzureCloud, type FakeAzureScaleSet, type FakeAzureVm } from './azure-fakes.js';
export { gcpComputeFake, gcpMetadataFake, type FakeGceInstance, type FakeGcpCloud } from './gcp-fakes.js';
