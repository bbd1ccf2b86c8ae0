// "Invite user" on the users list (SPEC-2 "Invitations", `POST /admin/user/invite`): the user is created
// without a usable password and mailed a link to choose one. The address of a pending invitation gets a new
// link (200); the API's refusals (a taken address or username) are shown as it words them.
import { useState, type FormEvent } from 'react';
import { call, type AdminUser } from './api.js';
import { t } from './i18n.js';
import { ErrorMessage, Notice, useAction } from './ui.js';

export function InviteUser({ onInvited }: { onInvited(): void }) {
  const { run, error, notice, busy } = useAction();
  const [round, setRound] = useState(0);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    void run(async (client) => {
      const email = text('email');
      await call<AdminUser>(client, 'POST', '/admin/user/invite', {
        body: {
          email,
          username: text('username') || undefined,
          firstName: text('firstName') || undefined,
          lastName: text('lastName') || undefined,
          isStaff: form.get('isStaff') === 'on',
        },
      });
      setRound((n) => n + 1);
      onInvited();
      return t('userInvited', { email });
    });
  };
  return (
    <section aria-labelledby="invite-user">
      <h2 id="invite-user">{t('inviteUser')}</h2>
      <p className="muted">{t('inviteHint')}</p>
      <form className="inline" onSubmit={onSubmit} key={round}>
        <label>
          {t('email')}
          <input name="email" type="email" required autoComplete="off" />
        </label>
        <label>
          {t('username')}
          <input name="username" autoComplete="off" />
        </label>
        <label>
          {t('firstName')}
          <input name="firstName" autoComplete="off" />
        </label>
        <label>
          {t('lastName')}
          <input name="lastName" autoComplete="off" />
        </label>
        <label className="check">
          <input name="isStaff" type="checkbox" />
          {t('staff')}
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('sendInvitation')}
        </button>
      </form>
      <ErrorMessage message={error} />
      <Notice message={notice} />
    </section>
  );
}
