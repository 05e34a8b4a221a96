import { z } from 'zod';
import { DynamoInstallStore } from '../adapters/install-store';
import { PrivacyReceipts } from '../adapters/privacy-store';
import { installReport } from '../domain/aggregation/install-report';
import { installHash } from '../domain/privacy/privacy';
import { tcfSummary } from '../domain/privacy/tcf-summary';
import { resourceName } from '../shared/config';
import { appByKey } from './apps';
import { defineCommand } from './command';
import { installUuid, key } from './flags';

/** What the service knows of one install: its attribution and its deletion receipts. */
export const installCommands = [
  defineCommand({
    name: 'install show',
    usage: 'install show --app-key K --install-uuid U    (how the install was attributed, and why)',
    flags: z.object({ 'app-key': key, 'install-uuid': installUuid }),
    async execute(f) {
      const app = await appByKey(f['app-key']);
      const items = await new DynamoInstallStore(resourceName.table('installs')).installItems(app.app_id, f['install-uuid']);
      const report = installReport(app.app_id, f['install-uuid'], items);
      // The TC string as a person reads it: its purposes and vendors (docs/privacy.md, "Consent").
      const tcf = report.consent?.tcf_string;
      return tcf === undefined ? report : { ...report, consent: { ...report.consent, tcf: tcfSummary(tcf) } };
    },
  }),
  defineCommand({
    name: 'privacy show',
    usage: 'privacy show --app-key K --install-uuid U    (the deletion receipts of an install and their state)',
    flags: z.object({ 'app-key': key, 'install-uuid': installUuid }),
    async execute(f) {
      const app = await appByKey(f['app-key']);
      const receipts = await new PrivacyReceipts(resourceName.table('privacy_requests')).ofInstall(
        app.app_id,
        installHash(f['install-uuid']),
      );
      // The receipt names the install by its hash only; the CLI was given the uuid and says which.
      return {
        app_id: app.app_id,
        install_hash: installHash(f['install-uuid']),
        receipts: receipts.map(({ app_install: _key, ...receipt }) => receipt),
      };
    },
  }),
];
