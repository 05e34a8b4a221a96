/**
 * A few DOM helpers instead of a framework: the pages are forms, tables and charts that redraw
 * when a command answers, which plain elements do well. Text always goes in as text nodes, never
 * as HTML, so nothing a tenant typed can become markup.
 */

import { plainError } from './errors';

export type Child = Node | string | number | null | undefined | false | Child[];
type Props = Record<string, string | number | boolean | EventListener | null | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

export interface Column<Row> {
  readonly label: string;
  readonly cell: (row: Row) => Child;
  /** Right-aligned, for numbers. */
  readonly numeric?: boolean;
}

export function table<Row>(caption: string, columns: readonly Column<Row>[], rows: readonly Row[], empty = 'Nothing yet.'): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: 0 },
    h(
      'table',
      null,
      h('caption', { class: 'visually-hidden' }, caption),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          columns.map((c) => h('th', { scope: 'col', class: c.numeric ? 'num' : null }, c.label)),
        ),
      ),
      h(
        'tbody',
        null,
        rows.map((row) =>
          h(
            'tr',
            null,
            columns.map((c) => h('td', { class: c.numeric ? 'num' : null }, c.cell(row))),
          ),
        ),
      ),
    ),
  );
}

/** An inline message; errors are announced to screen readers. */
export function notice(kind: 'error' | 'info' | 'success', text: string): HTMLElement {
  return h('p', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

export const code = (text: string) => h('code', null, text);

/** A read-only value with a Copy button (clipboard where the browser allows, else selected for Ctrl-C). */
export function copyable(label: string, value: string, testId?: string): HTMLElement {
  const input = h('input', {
    type: 'text',
    readonly: true,
    value,
    'aria-label': label,
    class: 'mono',
    'data-testid': testId ?? null,
    size: Math.min(Math.max(value.length, 20), 80),
  });
  const status = h('span', { class: 'copy-status', role: 'status' });
  const button = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: async () => {
        input.select();
        try {
          await navigator.clipboard.writeText(value);
          status.textContent = 'Copied';
        } catch {
          status.textContent = 'Selected: press Ctrl-C to copy';
        }
      },
    },
    'Copy',
  );
  return h('span', { class: 'copyable' }, input, button, status);
}

export interface Field {
  /** The admin command's flag this input fills (`ios-url`). */
  readonly flag: string;
  readonly label: string;
  readonly type?: 'text' | 'url' | 'number' | 'checkbox' | 'select' | 'date';
  readonly options?: readonly string[];
  readonly placeholder?: string;
  readonly required?: boolean;
  readonly hint?: string;
  readonly value?: string;
  /** Takes two columns (a UUID, a URL template). */
  readonly wide?: boolean;
}

let fieldIds = 0;

export function field(spec: Field): HTMLElement {
  const id = `f${++fieldIds}-${spec.flag}`;
  const hintId = spec.hint ? `${id}-hint` : null;
  const common = { id, name: spec.flag, required: spec.required ?? false, 'aria-describedby': hintId };
  let input: HTMLElement;
  if (spec.type === 'checkbox') {
    return h(
      'div',
      { class: 'field checkbox' },
      h('input', { ...common, type: 'checkbox' }),
      h('label', { for: id }, spec.label),
      spec.hint && h('small', { id: hintId }, spec.hint),
    );
  } else if (spec.type === 'select') {
    input = h(
      'select',
      common,
      (spec.options ?? []).map((option) => h('option', { value: option, selected: option === spec.value }, option || '(default)')),
    );
  } else {
    input = h('input', {
      ...common,
      type: spec.type ?? 'text',
      placeholder: spec.placeholder ?? null,
      value: spec.value ?? null,
      min: spec.type === 'number' ? 1 : null,
    });
  }
  return h(
    'div',
    { class: spec.wide ? 'field wide' : 'field' },
    h('label', { for: id }, spec.label, spec.required ? h('span', { 'aria-hidden': 'true' }, ' *') : null),
    input,
    spec.hint && h('small', { id: hintId }, spec.hint),
  );
}

/** The form's inputs as an admin command's flags: text as given (blank left out), checkboxes as true when ticked. */
export function formFlags(form: HTMLFormElement): Record<string, string | boolean | undefined> {
  const flags: Record<string, string | boolean | undefined> = {};
  for (const element of Array.from(form.elements)) {
    if (!(element instanceof HTMLInputElement || element instanceof HTMLSelectElement) || !element.name) continue;
    if (element instanceof HTMLInputElement && element.type === 'checkbox') flags[element.name] = element.checked || undefined;
    else flags[element.name] = element.value.trim() || undefined;
  }
  return flags;
}

/**
 * A form that runs something on submit, disables its button meanwhile and shows the outcome. A
 * refusal is said in plain words (errors.ts) beside the field at fault when the server names its
 * flag (the input gets aria-invalid and is described by the message, and takes focus), otherwise
 * under the form; the form is not cleared, so a typo is fixed, not retyped.
 */
export function actionForm(options: {
  readonly label: string;
  readonly fields: readonly (Field | HTMLElement)[];
  readonly submit: string;
  readonly run: (flags: Record<string, string | boolean | undefined>, form: HTMLFormElement) => Promise<Child>;
  readonly testId?: string;
}): HTMLFormElement {
  const outcome = h('div', { class: 'outcome', 'aria-live': 'polite' });
  const button = h('button', { type: 'submit' }, options.submit);
  const form = h(
    'form',
    { 'aria-label': options.label, class: 'action-form', 'data-testid': options.testId ?? null, novalidate: false },
    h(
      'div',
      { class: 'fields' },
      options.fields.map((f) => (f instanceof HTMLElement ? f : field(f))),
    ),
    h('div', { class: 'actions' }, button),
    outcome,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    button.disabled = true;
    replace(outcome);
    clearFieldErrors(form);
    options
      .run(formFlags(form), form)
      .then((shown) => replace(outcome, shown))
      .catch((error: unknown) => {
        if (!showFieldError(form, error)) replace(outcome, notice('error', plainError(error, formLabels(form))));
      })
      .finally(() => (button.disabled = false));
  });
  return form;
}

/** The form's field labels by flag (without the required mark), for plainError. */
function formLabels(form: HTMLFormElement): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const element of Array.from(form.elements)) {
    const input = element as HTMLInputElement;
    const text = input.name && input.labels?.[0]?.textContent;
    if (text) labels[input.name] = text.replace(/\s*\*\s*$/, '').trim();
  }
  return labels;
}

/** Puts the refusal beside its field; false when the error names no field of this form. */
function showFieldError(form: HTMLFormElement, error: unknown): boolean {
  const flag = (error as { flag?: string }).flag;
  if (!flag) return false;
  const input = Array.from(form.elements).find(
    (element): element is HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement =>
      (element instanceof HTMLInputElement || element instanceof HTMLSelectElement || element instanceof HTMLTextAreaElement) &&
      element.name === flag,
  );
  if (!input) return false;
  const id = `${input.id || `${flag}-field`}-error`;
  const message = h('small', { id, class: 'field-error', role: 'alert' }, plainError(error, formLabels(form)));
  input.setAttribute('aria-invalid', 'true');
  input.dataset.describedBy = input.getAttribute('aria-describedby') ?? '';
  input.setAttribute('aria-describedby', [id, input.dataset.describedBy].filter(Boolean).join(' '));
  input.insertAdjacentElement('afterend', message);
  input.focus();
  return true;
}

function clearFieldErrors(form: HTMLFormElement): void {
  for (const message of Array.from(form.querySelectorAll('.field-error'))) message.remove();
  for (const input of Array.from(form.querySelectorAll<HTMLElement>('[aria-invalid="true"]'))) {
    input.removeAttribute('aria-invalid');
    const before = input.dataset.describedBy;
    if (before) input.setAttribute('aria-describedby', before);
    else input.removeAttribute('aria-describedby');
    delete input.dataset.describedBy;
  }
}

/** A button that runs an action and reports its error (in plain words) beside itself. */
export function actionButton(label: string, run: () => Promise<void>, props: Props = {}): HTMLElement {
  const status = h('span', { class: 'button-status', role: 'status' });
  const button = h('button', { type: 'button', ...props }, label);
  button.addEventListener('click', () => {
    button.disabled = true;
    status.textContent = '';
    run()
      .catch((error: unknown) => {
        status.textContent = plainError(error);
        status.setAttribute('role', 'alert');
      })
      .finally(() => (button.disabled = false));
  });
  return h('span', { class: 'action-button' }, button, status);
}

/**
 * A button whose action is asked first, in a modal dialog that says what will happen (Cancel has
 * the focus, so Enter or Escape does nothing harmful).
 */
export function confirmedButton(
  label: string,
  confirm: { readonly title: string; readonly text: string; readonly action: string },
  run: () => Promise<void>,
  props: Props = {},
): HTMLElement {
  const status = h('span', { class: 'button-status', role: 'status' });
  const button = h('button', { type: 'button', ...props }, label);
  const titleId = `confirm-${++fieldIds}`;
  const cancel = h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'Cancel');
  const proceed = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      onclick: () => {
        dialog.close();
        button.disabled = true;
        status.textContent = '';
        run()
          .catch((error: unknown) => {
            status.textContent = plainError(error);
            status.setAttribute('role', 'alert');
          })
          .finally(() => (button.disabled = false));
      },
    },
    confirm.action,
  );
  const dialog = h(
    'dialog',
    { class: 'confirm', 'aria-labelledby': titleId },
    h('h2', { id: titleId }, confirm.title),
    h('p', null, confirm.text),
    h('div', { class: 'actions' }, cancel, proceed),
  );
  dialog.addEventListener('close', () => button.focus());
  button.addEventListener('click', () => {
    dialog.showModal();
    cancel.focus();
  });
  return h('span', { class: 'action-button' }, button, status, dialog);
}

/** The request each area waits for: an older one answering late does not overwrite a newer one. */
const loads = new WeakMap<Element, number>();
let loadCount = 0;

/**
 * Fills an area with what `load` answers: "Loading…" at once (the old numbers go), then the
 * result, or on failure the error in plain words in its place, never the stale data. Resolves
 * true when the result is shown. Every page's reads go through this (docs/console-analytics.md).
 */
export async function loadInto(area: Element, load: () => Promise<Child>): Promise<boolean> {
  const run = ++loadCount;
  loads.set(area, run);
  replace(area, h('p', { class: 'loading', role: 'status' }, 'Loading…'));
  area.setAttribute('aria-busy', 'true');
  try {
    const shown = await load();
    if (loads.get(area) !== run) return false;
    replace(area, shown);
    return true;
  } catch (error) {
    if (loads.get(area) === run) replace(area, notice('error', plainError(error)));
    return false;
  } finally {
    if (loads.get(area) === run) area.removeAttribute('aria-busy');
  }
}

export const dateTime = (ms: number | undefined | null) => (ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '');

/**
 * A message above the page that outlives the page's redraw (creating a company redraws the page
 * that created it) and goes away on the next navigation.
 */
export const flashArea = h('div', { class: 'flash', 'aria-live': 'polite', 'data-testid': 'flash' });

export function flash(kind: 'error' | 'info' | 'success', text: string): void {
  replace(flashArea, notice(kind, text));
}
