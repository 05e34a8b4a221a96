import { DESKTOP, type MarketerConsole } from '../../support/console-browser';

/**
 * What a page's suite may assume when it starts on the shared console, whatever the suite before
 * it left: the desktop viewport, and no console error logged yet.
 */
export async function fresh(m: MarketerConsole): Promise<void> {
  await m.page.setViewportSize(DESKTOP);
  m.consoleErrors.length = 0;
}
