// The confirmation before anything destructive (SPEC-3 §6 "asks before anything destructive"): a modal
// <dialog> (the browser keeps the focus inside it, makes the page behind it inert and closes it on Escape)
// with the role `alertdialog`, named by its title and described by its question; "Cancel" has the focus, so
// Enter alone never destroys anything.
import { useCallback, useId, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { t } from './i18n.js';

interface Question {
  text: string;
  confirmLabel: string;
  action: () => void;
}

function ConfirmDialog({ question, onClose }: { question: Question; onClose(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const id = useId();
  // A layout effect: its clean-up runs while the dialog is still in the document, so closing it (rather than
  // only removing it) hands the focus back to the control that opened it.
  useLayoutEffect(() => {
    const element = dialog.current;
    const opener = document.activeElement;
    if (element && !element.open) element.showModal();
    cancel.current?.focus();
    return () => {
      element?.close();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={dialog}
      className="confirm"
      role="alertdialog"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-text`}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <h2 id={`${id}-title`}>{t('dialogTitle')}</h2>
      <p id={`${id}-text`}>{question.text}</p>
      <div className="toolbar">
        <button
          type="button"
          className="danger"
          onClick={() => {
            onClose();
            question.action();
          }}
        >
          {question.confirmLabel}
        </button>
        <button type="button" ref={cancel} onClick={onClose}>
          {t('cancel')}
        </button>
      </div>
    </dialog>
  );
}

/**
 * `ask(text, confirmLabel, action)` opens the confirmation; `dialog` is the element to render (null while no
 * question is open). `action` runs only after the confirming button.
 */
export function useConfirm(): {
  ask(text: string, confirmLabel: string, action: () => void): void;
  dialog: ReactNode;
} {
  const [question, setQuestion] = useState<Question | null>(null);
  const ask = useCallback(
    (text: string, confirmLabel: string, action: () => void) => setQuestion({ text, confirmLabel, action }),
    [],
  );
  const close = useCallback(() => setQuestion(null), []);
  return { ask, dialog: question ? <ConfirmDialog question={question} onClose={close} /> : null };
}
