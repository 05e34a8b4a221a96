import type { Metrics } from '@aws-lambda-powertools/metrics';
import { appFailed, logger, metrics } from '../../../functions/shared/observability';

describe("a scheduled job's failed app", () => {
  afterEach(() => jest.restoreAllMocks());

  it('is logged with its app id and error, and counted in <job>AppFailed with the app as a dimension', () => {
    const error = jest.spyOn(logger, 'error').mockImplementation(() => undefined);
    const single = { addDimension: jest.fn(), addMetric: jest.fn() };
    jest.spyOn(metrics, 'singleMetric').mockReturnValue(single as unknown as Metrics);
    appFailed('PrivacyDrain', 'app_poisoned', new TypeError('boom'), { request_id: 'r-1' });
    expect(error).toHaveBeenCalledWith('PrivacyDrain: app failed, the run goes on with the other apps', {
      request_id: 'r-1',
      app_id: 'app_poisoned',
      error: { name: 'TypeError', message: 'boom' },
    });
    expect(single.addDimension).toHaveBeenCalledWith('app_id', 'app_poisoned');
    expect(single.addMetric).toHaveBeenCalledWith('PrivacyDrainAppFailed', 'Count', 1);
  });
});
