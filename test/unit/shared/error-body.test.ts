import { ServiceError } from '../../../functions/domain/common/errors';
import { EVENT_API_ERRORS, EventApiError, type EventApiErrorCode } from '../../../functions/domain/ingest/event-api';
import { REPORT_ERRORS, type ReportErrorCode, reportError } from '../../../functions/domain/reports/report-query';
import { errorResult } from '../../../functions/shared/http';

const bodyOf = (error: ServiceError) => JSON.parse(errorResult(error).body ?? 'null');

describe('error bodies', () => {
  it('carry the field at fault beside the code on a bad_batch_shape of POST /event', () => {
    expect(bodyOf(new EventApiError('bad_batch_shape', 'sent_at_ms'))).toEqual({ error: 'bad_batch_shape', field: 'sent_at_ms' });
    expect(bodyOf(new EventApiError('bad_batch_shape', 'events'))).toEqual({ error: 'bad_batch_shape', field: 'events' });
    expect(errorResult(new EventApiError('bad_batch_shape', 'events')).statusCode).toBe(400);
  });

  it('are the code alone for every other refusal of the event API', () => {
    for (const code of Object.keys(EVENT_API_ERRORS) as EventApiErrorCode[]) {
      expect(bodyOf(new EventApiError(code))).toEqual({ error: code });
    }
  });

  it("keep the Reporting API's single error field, for every code it answers", () => {
    for (const code of Object.keys(REPORT_ERRORS) as ReportErrorCode[]) {
      expect(bodyOf(reportError(code))).toEqual({ error: code });
    }
    expect(bodyOf(new ServiceError(405, 'method_not_allowed', { allow: 'GET' }))).toEqual({ error: 'method_not_allowed' });
  });
});
