import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { buildInfo } from './build-info.js';

/** Where every exported span and metric comes from: the service, this instance, the build's version. */
export function serviceResource(serviceName: string, instanceId: string): Resource {
  return resourceFromAttributes({
    [ATTR_SERVICE_NAME]: serviceName,
    [ATTR_SERVICE_INSTANCE_ID]: instanceId,
    [ATTR_SERVICE_VERSION]: buildInfo().version,
  });
}
