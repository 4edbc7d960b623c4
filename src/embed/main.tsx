import { render } from 'preact';
import { HostChannel } from './hostChannel.ts';
import { parseEmbedParams } from './params.ts';
import { Widget } from './Widget.tsx';

const params = parseEmbedParams(location.search);
if (params.theme !== 'auto') document.documentElement.dataset.theme = params.theme;
const channel = new HostChannel(params.allowedOrigins, window, document.referrer);

render(<Widget initial={params} channel={channel} />, document.getElementById('embed')!);
channel.post({ type: 'ready' });
