// A chat app as an Eve user would write it: the real `useEveAgent` hook from `eve/react`,
// talking to the bridge at `host` (another origin, read from the page's `?host=`).
import { useEveAgent } from 'eve/react';
import { createRoot } from 'react-dom/client';

function Part({ part }) {
  if (part.type === 'text') return <p data-part="text">{part.text}</p>;
  if (part.type !== 'authorization') return null;
  if (part.state === 'completed') return <p data-authorization-outcome={part.outcome}>{part.displayName}: {part.outcome}</p>;
  return part.authorization?.url ? <a data-sign-in={part.name} href={part.authorization.url}>Sign in to {part.displayName}</a> : null;
}

function Chat({ host }) {
  const agent = useEveAgent({ host });
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        const input = event.currentTarget.elements.namedItem('message');
        void agent.send(input.value).catch(() => {});
        input.value = '';
      }}
    >
      <output id="status" data-status={agent.status}>{agent.status}</output>
      {agent.error ? <p id="error">{agent.error.message}</p> : null}
      {agent.data.messages.map((message) => (
        <article key={message.id} data-role={message.role}>
          {message.parts.map((part, index) => <Part key={part.id ?? index} part={part} />)}
        </article>
      ))}
      <input id="message" name="message" />
      <button id="send" type="submit">Send</button>
    </form>
  );
}

const host = new URLSearchParams(location.search).get('host') ?? '';
createRoot(document.getElementById('root')).render(<Chat host={host} />);
