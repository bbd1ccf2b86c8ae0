// The organizations panel of the example frontend (docs/organizations.md "The frontend side", SPEC-3 §2): lists
// the caller's organizations and shows the one chosen in THIS tab. The choice lives in sessionStorage, which
// each tab has to itself, and every request names its organization: two tabs work in two organizations at once
// and never see each other's data (no server-side "active organization" to go stale).
import type { SvcClient } from '@svc/client';

const TAB_KEY = 'svc.demo.organization';

/** Renders the panel into the elements of index.html; the tab's choice survives a reload of the tab. */
export async function renderOrganizations(
  client: SvcClient,
  showError: (error: unknown) => void,
): Promise<void> {
  const select = document.getElementById('org-select') as HTMLSelectElement;
  const current = document.getElementById('org-current') as HTMLElement;
  const members = document.getElementById('org-members') as HTMLUListElement;
  const organizations = await client.organizations();
  select.replaceChildren(
    ...organizations.map((org) => {
      const option = document.createElement('option');
      option.value = org.id;
      option.textContent = `${org.name} (${org.role ?? 'superuser'})`;
      return option;
    }),
  );
  let shown = 0;
  async function show(id: string | undefined): Promise<void> {
    const request = ++shown;
    current.textContent = '';
    members.replaceChildren();
    if (!id) {
      current.textContent = 'You are not a member of any organization.';
      return;
    }
    sessionStorage.setItem(TAB_KEY, id);
    const org = client.organization(id);
    const [detail, page] = await Promise.all([org.get(), org.members({ pageSize: 50 })]);
    // A later choice in this tab wins over an answer still on its way for an earlier one.
    if (request !== shown) return;
    current.dataset.organization = detail.id;
    current.textContent = `${detail.name} — your role: ${detail.role ?? 'none (superuser)'}`;
    members.replaceChildren(
      ...page.items.map((member) => {
        const item = document.createElement('li');
        // Names come from users: shown as text, never as HTML.
        item.textContent = `${member.username} (${member.role})`;
        return item;
      }),
    );
  }
  const stored = sessionStorage.getItem(TAB_KEY);
  const initial = organizations.some((org) => org.id === stored) ? stored! : organizations[0]?.id;
  if (initial) select.value = initial;
  select.onchange = () => void show(select.value).catch(showError);
  await show(initial);
}
