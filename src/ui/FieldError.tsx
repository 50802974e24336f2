import { useEffect, useRef } from 'react';

/**
 * A message about one field, drawn beside it: announced as it appears and
 * given the focus, so that a person who chose something is told where they look.
 */
export function FieldError({ message }: { message: string | null }) {
  const ref = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (message) ref.current?.focus();
  }, [message]);
  return message ? (
    <p role="alert" className="error" tabIndex={-1} ref={ref}>
      {message}
    </p>
  ) : null;
}
