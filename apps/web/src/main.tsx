import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { startApp } from './app.js';
import { App } from './views/App.js';
import './styles/index.css';

startApp();
const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
