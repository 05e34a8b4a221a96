import { FREE_PLAN_MONTHLY_CAP, monthlyCapFor } from '../../../functions/domain/tenants/tenant';

describe('the monthly cap of a new company', () => {
  it('is the free plan cap on the free plan unless another is asked for', () => {
    expect(monthlyCapFor('free')).toBe(FREE_PLAN_MONTHLY_CAP);
    expect(FREE_PLAN_MONTHLY_CAP).toBe(10_000);
    expect(monthlyCapFor('free', 500)).toBe(500);
  });

  it('is none on the paid plan unless one is asked for', () => {
    expect(monthlyCapFor('paid')).toBeNull();
    expect(monthlyCapFor('paid', 1_000_000)).toBe(1_000_000);
  });
});
