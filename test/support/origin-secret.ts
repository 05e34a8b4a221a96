import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { TEST_ORIGIN_SECRET, TEST_ORIGIN_SECRET_ARN } from './edge';

/**
 * For unit tests that call a routed handler with the AWS clients mocked (aws-sdk-client-mock):
 * Secrets Manager answers GetSecretValue of the test origin secret's ARN with TEST_ORIGIN_SECRET as
 * its current value and has no previous one, as a secret never rotated. Returns the mock, for
 * tests that answer otherwise.
 */
export function mockOriginSecret() {
  const secrets = mockClient(SecretsManagerClient);
  const notFound = () =>
    new ResourceNotFoundException({ message: "Secrets Manager can't find the specified secret value for staging label", $metadata: {} });
  secrets.on(GetSecretValueCommand).rejects(notFound());
  secrets
    .on(GetSecretValueCommand, { SecretId: TEST_ORIGIN_SECRET_ARN, VersionStage: 'AWSCURRENT' })
    .resolves({ SecretString: TEST_ORIGIN_SECRET });
  return secrets;
}
