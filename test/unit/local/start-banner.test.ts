import { type FunctionSpec, functions } from '../../../lib/manifest';
import { consoleBanner } from '../../../local/console-demo';
import { CATCH_ALL_ROUTES, type Demo, demoCurls, demoSections } from '../../../local/seed';

const demo: Demo = {
  company_id: 'com_1',
  company_key: 'co_live_1',
  app_id: 'app_1',
  app_key: 'app_live_1',
  signing_secret: 'secret',
  server_key: 'srv_read',
  cost_key: 'srv_cost',
  ad_revenue_key: 'srv_ad_revenue',
  link_id: 'L1',
  link_url: 'http://127.0.0.1:3000/l/L1',
};
const routes = Object.values(functions as Record<string, FunctionSpec>).flatMap((f) => f.routes ?? []);
const sections = demoSections(demo, 'http://127.0.0.1:3000');

describe("npm start's banner", () => {
  it('has a curl for every route the manifest serves but the catch-alls', () => {
    for (const route of CATCH_ALL_ROUTES) expect(routes).toContain(route);
    const tried = sections.flatMap((section) => section.routes);
    expect([...tried].sort()).toEqual(routes.filter((route) => !CATCH_ALL_ROUTES.includes(route)).sort());
  });

  it("calls each section's routes in its own lines", () => {
    for (const section of sections) {
      const text = section.lines.join('\n');
      for (const route of section.routes) {
        // A greedy route ("OPTIONS /{proxy+}") is called on any path under its prefix.
        const path = (route.split(' ')[1] ?? '').replace('{link_id}', demo.link_id).replace('{proxy+}', '');
        expect(text).toContain(path);
      }
    }
  });

  it('prints every section, each with its comment', () => {
    const text = demoCurls(demo, 'http://127.0.0.1:3000');
    for (const section of sections) {
      expect(section.lines[0]).toMatch(/^# /);
      expect(text).toContain(section.lines.join('\n'));
    }
    expect(text).toContain('srv_cost');
  });
});

describe("npm start's console lines", () => {
  it('give the console URL and the demo user to sign in as, and how to invite more', () => {
    const text = consoleBanner('http://127.0.0.1:41234', { email: 'demo-admin@example.com', password: 'pw-1', role: 'admin' });
    expect(text.split('\n')).toEqual([
      'Console (sign-in with roles, as deployed): http://127.0.0.1:41234/',
      "  sign in as the demo company's admin: demo-admin@example.com / pw-1",
      '  more users: npm run admin -- user invite --email E --role viewer|marketer|admin --company-key K',
    ]);
  });
});
