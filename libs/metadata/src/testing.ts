/** Local fakes of the cloud metadata services and a moto launcher, for this lib's and the apps' tests. */
export { closedLoopbackPort, json, LoopbackServer, type FakeResponse, type SeenRequest } from './testing/loopback-server.fixture.js';
export { awsImdsFake, type FakeEc2Instance } from './testing/aws-imds-fake.fixture.js';
export { MotoServer, motoServerBinary, motoUnavailable } from './testing/moto.fixture.js';
export { seedMotoCluster, type SeededAwsCluster } from './testing/moto-seed.fixture.js';
export { azureArmFake, azureImdsFake, azureVmId, type FakeAzureCloud, type FakeAzureScaleSet, type FakeAzureVm } from './testing/azure-fakes.fixture.js';
export { gcpComputeFake, gcpMetadataFake, type FakeGceInstance, type FakeGcpCloud } from './testing/gcp-fakes.fixture.js';
