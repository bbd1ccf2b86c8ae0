import type { SvcClient } from '@svc/client';

// The user's settings form from the UI schema (docs/settings-ui-schema.md): one fieldset per section, one
// control per field by its `component` (select, toggle, number, input), saved field by field with
// PUT /api/auth/user/settings/{category}/{key}, which validates (422 user.settings_value_invalid).

type Option = { value: unknown; label: string };
type Values = Record<string, Record<string, unknown>>;

export async function renderSettingsForm(
  client: SvcClient,
  form: HTMLFormElement,
  onError: (error: unknown) => void,
): Promise<void> {
  const [schema, values] = await Promise.all([
    client.api.GET('/api/auth/user/settings/schema'),
    client.api.GET('/api/auth/user/settings'),
  ]);
  if (!schema.data || !values.data) return onError(schema.error ?? values.error);
  const current = values.data.data as Values;
  form.replaceChildren();
  for (const section of schema.data.data.sections) {
    const fieldset = document.createElement('fieldset');
    const legend = document.createElement('legend');
    legend.textContent = section.title;
    fieldset.append(legend);
    for (const field of section.fields) {
      const value = current[section.name]?.[field.name] ?? field.default ?? null;
      const control = controlFor(field.component, field.properties, value);
      control.name = `${section.name}.${field.name}`;
      control.addEventListener('change', () => {
        void save(client, section.name, field.name, readValue(control, field.component)).catch(onError);
      });
      const label = document.createElement('label');
      label.append(field.label, control);
      fieldset.append(label);
    }
    form.append(fieldset);
  }
}

function controlFor(
  component: string,
  properties: Record<string, unknown>,
  value: unknown,
): HTMLInputElement | HTMLSelectElement {
  if (component === 'select') {
    const select = document.createElement('select');
    for (const option of (properties.options as Option[] | undefined) ?? []) {
      const element = new Option(option.label, JSON.stringify(option.value));
      element.selected = JSON.stringify(option.value) === JSON.stringify(value);
      select.append(element);
    }
    return select;
  }
  const input = document.createElement('input');
  if (component === 'toggle') {
    input.type = 'checkbox';
    input.checked = value === true;
  } else if (component === 'number') {
    input.type = 'number';
    if (typeof properties.min === 'number') input.min = String(properties.min);
    if (typeof properties.max === 'number') input.max = String(properties.max);
    input.value = value === null ? '' : String(value);
  } else {
    input.value = value === null ? '' : String(value);
  }
  return input;
}

function readValue(control: HTMLInputElement | HTMLSelectElement, component: string): unknown {
  if (component === 'select') return JSON.parse(control.value) as unknown;
  if (control instanceof HTMLInputElement && component === 'toggle') return control.checked;
  if (component === 'number') return control.value === '' ? null : Number(control.value);
  return control.value === '' ? null : control.value;
}

async function save(client: SvcClient, category: string, key: string, value: unknown): Promise<void> {
  const { error } = await client.api.PUT('/api/auth/user/settings/{category}/{key}', {
    params: { path: { category, key } },
    body: { value: value as string | number | boolean | null },
  });
  if (error) throw new Error(`${error.detail[0]?.msg ?? 'refused'} (${error.detail[0]?.code})`);
}
