// The engine's worker is an ES module (it imports the library), which Vite builds as one when told so.
export default { worker: { format: 'es' } };
