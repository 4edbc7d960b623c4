import { render } from 'preact';
import { App } from './App.tsx';

const app = document.getElementById('app')!;
// frame-ancestors cannot be sent by a static host that sets no headers (a meta policy cannot carry it), so
// the app itself refuses to run framed: a page of the same site could otherwise put it under its own
// buttons, with the same storage. The widget (embed.html) is made to be framed and has its own entry.
if (window.top !== window.self) {
  app.textContent = 'Blobless does not run inside a frame. Open it in a tab of its own.';
} else {
  render(<App />, app);
}
